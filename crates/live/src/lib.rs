//! Live traces: sources of packets that keep coming, and a
//! pipeline that turns them into a statistics cube queryable while it grows.
//!
//! Where it sits: above `ctf` (decoding) and `cube` (the cube and its kernel feed).
//! The data flow is
//!
//! ```text
//! source thread ──Msg──▶ bounded ring buffer ──▶ Processor ──▶ Arc<RwLock<Cube>> ◀── queries
//! (relay | replay | directory)                 (merge, feed)      (summary, --serve)
//! ```
//!
//! - [`proto`] and [`client`]: the LTTng viewer protocol of `lttng-relayd` (no CTF);
//! - [`relay`]: following one session of a relay daemon, reconnecting when it goes away;
//! - [`replay`]: a trace directory fed at its own pace (or faster), and a growing
//!   directory followed;
//! - [`pipeline`]: the processor: time order across streams without waiting forever,
//!   overload policy, lag;
//! - [`summary`]: the periodic terminal summary.
#![warn(missing_docs)]

pub mod client;
pub mod day;
pub mod error;
pub mod msg;
pub mod pipeline;
pub mod proto;
pub mod relay;
pub mod url;

pub use error::{LiveError, Result};
pub use msg::Msg;
pub use pipeline::{Overload, PipelineOptions, Processor, SharedCube, SharedStats, Stats};
pub mod replay;
pub mod summary;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs a source on its own thread and the [`Processor`] on this one, joined by a
/// bounded ring buffer of `proc_opts.capacity` messages. When the processor fails,
/// `stop` is set so that the source ends too. Returns the final stats and what the
/// source returned.
pub fn run<R, F>(processor: Processor, capacity: usize, stop: Arc<AtomicBool>, source: F) -> Result<(Stats, R)>
where
    R: Send + 'static,
    F: FnOnce(&crossbeam_channel::Sender<Msg>, &AtomicBool) -> Result<R> + Send + 'static,
{
    let (tx, rx) = crossbeam_channel::bounded(capacity.max(1));
    let stop2 = stop.clone();
    let h = std::thread::Builder::new()
        .name("tracecube-source".into())
        .spawn(move || {
            let r = source(&tx, &stop2);
            if r.is_err() {
                // Let the processor finish with what it has.
                let _ = tx.send(Msg::End);
            }
            r
        })
        .map_err(|source| LiveError::Output { what: "source thread".into(), source })?;
    let r = processor.run(rx);
    if r.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    let src = h.join().unwrap_or_else(|_| Err(LiveError::Decode { source_name: "source".into(), msg: "the source thread panicked".into() }));
    let stats = r?;
    Ok((stats, src?))
}
