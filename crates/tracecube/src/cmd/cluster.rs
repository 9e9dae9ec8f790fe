//! `tracecube cluster`: the processes of a Ballista cluster that runs `tracecube sql`
//! over a fleet's traces (the `fleet` crate). `sql --cluster df://HOST:PORT` is its
//! client.

use std::net::SocketAddr;

use anyhow::{Context, Result};
use fleet::process::{ExecutorOptions, SchedulerOptions};

/// Arguments of `cluster`.
#[derive(clap::Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub role: Role,
    /// Log Ballista's records of this level and above to stderr (off, error, warn,
    /// info, debug, trace).
    #[arg(long, global = true, default_value = "warn", value_parser = log_level)]
    pub log: fleet::LevelFilter,
    /// The scheduler pushes tasks to the executors instead of their asking for them
    /// (Ballista's push-staged policy: lower latency, but with Ballista 54.1 a query
    /// whose executor dies never ends); give it to the scheduler and every executor.
    #[arg(long, global = true)]
    pub push: bool,
}

/// `--log`'s level.
fn log_level(s: &str) -> Result<fleet::LevelFilter, String> {
    s.parse().map_err(|_| format!("{s}: not a level (off, error, warn, info, debug, trace)"))
}

/// A process of the cluster.
#[derive(clap::Subcommand)]
pub enum Role {
    /// Ballista's scheduler: plans the queries of `sql --cluster` and hands their tasks
    /// to the executors.
    Scheduler {
        /// Address to listen on, for clients and executors.
        #[arg(long, default_value = "0.0.0.0:50050")]
        bind: SocketAddr,
        /// Seconds without a heartbeat after which an executor is dead and its tasks
        /// run elsewhere.
        #[arg(long, default_value_t = 30)]
        executor_timeout: u64,
    },
    /// An executor: runs tasks (scans of the traces, which it must read at the paths
    /// the client gave) and serves their shuffle outputs.
    Executor {
        /// The scheduler's address.
        #[arg(long)]
        scheduler: SocketAddr,
        /// Address for its shuffle outputs (Arrow Flight); its gRPC service takes the
        /// next port.
        #[arg(long, default_value = "0.0.0.0:50051")]
        bind: SocketAddr,
        /// The host name or address other processes reach it at (default: the bind
        /// address; give one when binding 0.0.0.0 on a real network).
        #[arg(long)]
        external_host: Option<String>,
        /// Directory for shuffle outputs (default: a temporary one).
        #[arg(long)]
        work_dir: Option<String>,
        /// Tasks run at once (0: one per core).
        #[arg(long, default_value_t = 0)]
        concurrent_tasks: usize,
        /// Seconds between heartbeats to the scheduler.
        #[arg(long, default_value_t = 5)]
        heartbeat: u64,
    },
}

/// Network processes write to sockets that peers may close (a probe, a killed
/// executor): that must be an error of the write, not `SIGPIPE`, which `main` restores
/// to its default (death) for pipelines like `tracecube dump T | head`.
pub fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition to "ignore" has no handler to race with.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Runs `cluster`: the process serves until it is stopped.
pub fn run(a: ClusterArgs) -> Result<()> {
    ignore_sigpipe();
    fleet::process::init_logging(a.log);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    match a.role {
        Role::Scheduler { bind, executor_timeout } => {
            eprintln!("tracecube: scheduler on {bind}");
            rt.block_on(fleet::process::run_scheduler(&SchedulerOptions { bind, executor_timeout_s: executor_timeout, pull: !a.push }))?;
        }
        Role::Executor { scheduler, bind, external_host, work_dir, concurrent_tasks, heartbeat } => {
            eprintln!("tracecube: executor on {bind}, scheduler {scheduler}");
            let opts = ExecutorOptions { scheduler, bind, external_host, work_dir, concurrent_tasks, heartbeat_s: heartbeat, pull: !a.push };
            rt.block_on(fleet::process::run_executor(&opts))?;
        }
    }
    Ok(())
}
