//! Linux kernel events → cube updates: the kernel feed and the parallel cube build.
//!
//! Where it sits: it wires `ctf` (events), the `kernel` model (event layouts, the log
//! record type, the replayed threads and fd tables, who runs on each CPU, the latency
//! rules), `engine` (slices, workers, the ordered merge) and `cube` (which knows
//! nothing of traces). It keeps no kernel state of its own (pending calls and thread
//! names are the replay's): only what the cube needs beside the model (members, the
//! latency measures' state machines of `kernel::latency`: wake-up waits, interrupt
//! handlers, block requests).
//! What lives where:
//! * [`log`]: the worker side, a slice's events → a [`log::SliceLog`]: the partial
//!   history of event counts per frame and the kernel's records
//!   ([`kernel::log::Rec`]), stamped with their times;
//! * [`apply`]: the [`apply::Applier`], which applies logs to the cube in time order
//!   over the kernel's state ([`kernel::replay::Replay`], [`kernel::runs::Clock`]);
//! * [`build`]: the build as an engine analysis ([`build_from_trace`]), and
//!   [`KernelFeed`], the same one event at a time, for live sources.
//!
//! ```no_run
//! let (cube, report) = cube_feed::build_from_trace(std::path::Path::new("trace"), &Default::default())?;
//! print!("{}", report.to_text());
//! # Ok::<(), cube::CubeError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apply;
pub mod build;
pub mod log;

pub use build::{build_from_logs, build_from_set, build_from_trace, build_with_progress, log_slice, slices, BuildOptions, BuildReport, CubeBuild, KernelFeed};
