//! `tracecube live` and `tracecube replay`: the live pipeline of the `live` crate, wired
//! to the terminal (periodic summary), files (dump, cube, report) and `--serve`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use analysis::text;
use anyhow::{bail, Context, Result};
use live::{Overload, PipelineOptions, Processor, SharedCube, SharedStats};

/// Options shared by `live` and `replay`.
#[derive(clap::Args, Debug, Clone)]
pub struct PipelineArgs {
    /// Ring buffer capacity between the reader and the processor, in packets.
    #[arg(long, default_value_t = 1024)]
    pub buffer: usize,
    /// On overload: `wait` (update the cube less often; lag grows) or `drop` (drop and
    /// count the waiting events).
    #[arg(long, default_value = "wait")]
    pub overload: Overload,
    /// Print a summary every SECONDS (0: only at the end).
    #[arg(long, default_value_t = 2.0)]
    pub summary_every: f64,
    /// The summary's window: the last SECONDS of stream time.
    #[arg(long, default_value_t = 10)]
    pub window: u64,
    /// Rows per summary table.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Summary times of day in UTC rather than the local time zone.
    #[arg(long)]
    pub gmt: bool,
    /// Write the canonical JSON dump of every event fed to the cube to FILE.
    #[arg(long)]
    pub dump: Option<PathBuf>,
    /// Save the cube to DIR at the end (queryable with `tracecube query DIR`).
    #[arg(long)]
    pub cube_out: Option<PathBuf>,
    /// Cube configuration (TOML), as for `cube build`.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Write the final counters (events, drops, lag, notices) as JSON to FILE.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Serve the query API over HTTP/JSON at ADDR while ingesting.
    #[arg(long)]
    pub serve: Option<String>,
    /// Longest time between two cube updates, ms.
    #[arg(long, default_value_t = 50)]
    pub interval_ms: u64,
    /// Benchmark and test knob: extra time the processor spends per packet, µs.
    #[arg(long, default_value_t = 0, hide = true)]
    pub consumer_delay_us: u64,
}

/// Arguments of `live`.
#[derive(clap::Args, Debug)]
pub struct LiveArgs {
    /// `net://HOST[:PORT]/host/HOSTNAME/SESSION` (a relay daemon's live session), or a
    /// trace directory being written (followed as it grows).
    pub source: String,
    /// List the relay's sessions (`tracecube live --list net://HOST`).
    #[arg(long)]
    pub list: bool,
    /// Directory source: stop once it has not grown for DUR seconds.
    #[arg(long)]
    pub until_idle: Option<f64>,
    /// Relay source: keep trying to reconnect for SECONDS after the relay went away.
    #[arg(long, default_value_t = 60.0)]
    pub reconnect_for: f64,
    /// Relay source: print every metadata reply and stream index received on stderr
    /// (tracing the viewer protocol).
    #[arg(long)]
    pub debug_protocol: bool,
    /// Pipeline options.
    #[command(flatten)]
    pub pipe: PipelineArgs,
}

/// Arguments of `replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// Trace directory.
    pub trace: PathBuf,
    /// Stream time runs SPEED times faster than wall time (0: as fast as possible).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Sample the process's memory every SECONDS of wall time into the report (a
    /// table of resident memory over stream time).
    #[arg(long)]
    pub memory_every: Option<f64>,
    /// Pipeline options.
    #[command(flatten)]
    pub pipe: PipelineArgs,
}

/// `--serve ADDR`: exposes the live cube through the serve crate's HTTP/JSON API and
/// page (in live mode: the page refreshes on its own). The handle keeps it running.
fn start_serve(addr: &str, cube: SharedCube) -> Result<serve::ServerHandle> {
    let sock = super::serve::listen_addr("--serve", addr)?;
    let h = serve::spawn(sock, cube, true)?;
    eprintln!("serving the live cube on http://{}/", h.local_addr());
    Ok(h)
}

/// Anonymous resident memory (heap, buffers; not the mapped trace files), bytes.
fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("RssAnon:"))?;
    let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `(wall s, stream s, anonymous RSS bytes, cube bytes)`.
type MemorySample = (f64, f64, u64, u64);

/// Runs the pipeline with `source` and the options; prints summaries and the final
/// report. Returns the source's report and the errors that ended streams (for the
/// caller to exit non-zero on, after its own report).
fn run_pipeline<R, F>(name: &str, a: &PipelineArgs, mem_every: Option<f64>, source: F) -> Result<(R, Vec<String>)>
where
    R: Send + 'static + serde::Serialize,
    F: FnOnce(&crossbeam_channel::Sender<live::Msg>, &AtomicBool) -> live::Result<R> + Send + 'static,
{
    let config = super::cube::load_config(a.config.as_deref())?;
    let cube: SharedCube = Arc::new(RwLock::new(cube::Cube::new(config)?));
    let stats: SharedStats = Arc::new(Mutex::new(live::Stats::default()));
    let _server = match &a.serve {
        Some(addr) => Some(start_serve(addr, cube.clone())?),
        None => None,
    };
    let dump: Option<Box<dyn std::io::Write + Send>> = match &a.dump {
        Some(p) => Some(Box::new(std::io::BufWriter::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?))),
        None => None,
    };
    let opts = PipelineOptions {
        overload: a.overload,
        capacity: a.buffer.max(1),
        interval: Duration::from_millis(a.interval_ms.max(1)),
        consumer_delay: Duration::from_micros(a.consumer_delay_us),
    };
    let style = text::TextStyle { gmt: a.gmt };
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    // The summary (and memory sampling) thread reads the cube while it grows.
    let memory: Arc<Mutex<Vec<MemorySample>>> = Arc::default();
    let watcher = {
        let (cube, stats, done, memory) = (cube.clone(), stats.clone(), done.clone(), memory.clone());
        let (every, window, top) = (a.summary_every, a.window, a.top);
        std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut next_summary = every;
            let mut next_mem = 0.0;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                let el = t0.elapsed().as_secs_f64();
                if let Some(m) = mem_every {
                    if el >= next_mem {
                        next_mem = el + m;
                        let st = stats.lock().map(|s| s.last_ts).unwrap_or(None);
                        let origin = cube.read().ok().and_then(|c| c.span().map(|s| s.0));
                        let stream_s = match (st, origin) {
                            (Some(t), Some(o)) => (t as f64 - o as f64) / 1e9,
                            _ => 0.0,
                        };
                        let cube_mem = cube.read().map(|c| c.memory()).unwrap_or(0);
                        memory.lock().unwrap_or_else(|e| e.into_inner()).push((el, stream_s, rss_bytes().unwrap_or(0), cube_mem));
                    }
                }
                if every > 0.0 && el >= next_summary {
                    next_summary = el + every;
                    let st = stats.lock().map(|s| s.clone()).unwrap_or_default();
                    if let Ok(c) = cube.read() {
                        eprint!("--- {:.1} s\n{}", el, live::summary::render(&c, &st, window, top, style));
                    }
                }
            }
        })
    };
    let p = Processor::new(name, cube.clone(), stats.clone(), dump, opts);
    let r = live::run(p, a.buffer.max(1), stop, source);
    done.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    let (st, src) = r?;
    {
        let c = cube.read().unwrap_or_else(|e| e.into_inner());
        eprint!("--- end\n{}", live::summary::render(&c, &st, a.window, a.top, style));
    }
    if let Some(dir) = &a.cube_out {
        let mut c = cube.write().unwrap_or_else(|e| e.into_inner());
        cube::save(&mut c, dir)?;
        eprintln!("cube written to {}", dir.display());
    }
    if let Some(p) = &a.report {
        let mem = memory.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let j = serde_json::json!({
            "stats": st,
            "lag_mean_s": st.lag_mean_s(),
            "source": src,
            "memory": mem.iter().map(|(w, s, b, c)| serde_json::json!({"wall_s": w, "stream_s": s, "rss_anon_bytes": b, "cube_bytes": c})).collect::<Vec<_>>(),
        });
        std::fs::write(p, serde_json::to_string_pretty(&j)?).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok((src, st.stream_errors))
}

/// Runs `live`.
pub fn run(a: LiveArgs) -> Result<()> {
    if a.source.starts_with("net://") || a.source.starts_with("net4://") {
        let url = live::url::LiveUrl::parse(&a.source)?;
        if a.list {
            for s in live::relay::list_sessions(&url, Duration::from_secs(10))? {
                println!(
                    "net://{}:{}/host/{}/{}  (id {}, {} streams, {} viewers, live timer {} µs)",
                    url.host, url.port, s.hostname, s.name, s.id, s.streams, s.clients, s.live_timer_us
                );
            }
            return Ok(());
        }
        let mut opts = live::relay::RelayOptions::new(url);
        opts.reconnect_for = Duration::from_secs_f64(a.reconnect_for.max(0.0));
        opts.debug = a.debug_protocol;
        let (rep, errors) = run_pipeline(&a.source, &a.pipe, None, move |tx, stop| live::relay::follow(&opts, tx, stop))?;
        eprintln!(
            "relay: {} packets ({}), {} beacons, {} reconnections",
            text::count(rep.packets),
            text::bytes(rep.bytes),
            text::count(rep.beacons),
            rep.reconnections
        );
        for l in &rep.losses {
            eprintln!("relay: {l}");
        }
        return super::fail_on_stream_errors(&errors);
    }
    if a.list {
        bail!("--list needs a net://HOST URL");
    }
    let path = PathBuf::from(&a.source);
    if !path.is_dir() {
        bail!("{}: neither a net:// URL nor a directory", a.source);
    }
    let opts =
        live::replay::FollowOptions { poll: Duration::from_millis(200), until_idle: a.until_idle.map(Duration::from_secs_f64), quiet: Duration::from_secs(1) };
    let p2 = path.clone();
    let (rep, errors) = run_pipeline(&path.display().to_string(), &a.pipe, None, move |tx, stop| live::replay::follow_dir(&p2, &opts, tx, stop))?;
    eprintln!("directory: {} packets ({})", text::count(rep.packets), text::bytes(rep.bytes));
    super::fail_on_stream_errors(&errors)
}

/// Runs `replay`.
pub fn replay(a: ReplayArgs) -> Result<()> {
    let path: &Path = &a.trace;
    let p2 = path.to_path_buf();
    let speed = a.speed;
    let (rep, errors) = run_pipeline(&path.display().to_string(), &a.pipe, a.memory_every, move |tx, stop| live::replay::replay(&p2, speed, tx, stop))?;
    eprintln!(
        "replay: {} packets ({}), {} of stream in {} ({:.1}x)",
        text::count(rep.packets),
        text::bytes(rep.bytes),
        text::duration((rep.stream_seconds * 1e9) as u64),
        text::duration((rep.wall_seconds * 1e9) as u64),
        rep.stream_seconds / rep.wall_seconds.max(1e-9)
    );
    super::fail_on_stream_errors(&errors)
}
