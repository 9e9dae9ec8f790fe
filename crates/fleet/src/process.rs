//! The cluster's processes: Ballista's scheduler and executor, each with tracecube's
//! codecs, so that trace tables and scans travel in plans.

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;

use crate::codec::codecs;
use crate::FleetError;

/// Options of a scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// Where it listens for clients and executors.
    pub bind: SocketAddr,
    /// An executor without a heartbeat for this long is dead: its tasks run again
    /// elsewhere.
    pub executor_timeout_s: u64,
    /// Whether executors ask for tasks (pull) or are given them (push); executors must
    /// use the same.
    pub pull: bool,
}

/// Ballista's policy for `pull`.
fn policy(pull: bool) -> TaskSchedulingPolicy {
    if pull {
        TaskSchedulingPolicy::PullStaged
    } else {
        TaskSchedulingPolicy::PushStaged
    }
}

/// Sends Ballista's log records of `level` and above to standard error, one line each
/// (`[LEVEL module] message`).
pub fn init_logging(level: log::LevelFilter) {
    if log::set_logger(&StderrLog).is_ok() {
        log::set_max_level(level);
    }
}

/// The processes' logger. (A logging crate such as env_logger needs `log`'s `std`
/// feature, which would rebuild every crate that logs, DataFusion's included, for a
/// few lines.)
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("[{} {}] {}", r.level(), r.target(), r.args());
        }
    }

    fn flush(&self) {}
}

/// Runs a scheduler until the process ends.
pub async fn run_scheduler(opts: &SchedulerOptions) -> Result<(), FleetError> {
    let (logical, physical) = codecs();
    let config = SchedulerConfig {
        bind_host: opts.bind.ip().to_string(),
        bind_port: opts.bind.port(),
        external_host: opts.bind.ip().to_string(),
        executor_timeout_seconds: opts.executor_timeout_s,
        scheduling_policy: policy(opts.pull),
        expire_dead_executor_interval_seconds: opts.executor_timeout_s.clamp(1, 15),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config).await.map_err(|e| FleetError::Ballista(e.to_string()))?;
    ballista_scheduler::scheduler_process::start_server(cluster, opts.bind, Arc::new(config)).await.map_err(|e| FleetError::Ballista(e.to_string()))
}

/// Options of an executor.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler's address.
    pub scheduler: SocketAddr,
    /// Where it serves its shuffle outputs (Arrow Flight); its gRPC port is the next
    /// one.
    pub bind: SocketAddr,
    /// The address other processes reach it at (None: the bind address).
    pub external_host: Option<String>,
    /// Where shuffle outputs are written (None: a temporary directory).
    pub work_dir: Option<String>,
    /// Tasks run at once (0: one per core).
    pub concurrent_tasks: usize,
    /// Seconds between heartbeats to the scheduler.
    pub heartbeat_s: u64,
    /// Asks for tasks (pull) instead of being given them (push), as its scheduler.
    pub pull: bool,
}

/// Runs an executor until the process ends.
pub async fn run_executor(opts: &ExecutorOptions) -> Result<(), FleetError> {
    let (logical, physical) = codecs();
    let grpc_port = opts.bind.port().checked_add(1).ok_or_else(|| FleetError::Address(format!("{}: no port after this one for gRPC", opts.bind)))?;
    let mut config = ExecutorProcessConfig {
        bind_host: opts.bind.ip().to_string(),
        external_host: Some(opts.external_host.clone().unwrap_or_else(|| opts.bind.ip().to_string())),
        port: opts.bind.port(),
        grpc_port,
        scheduler_host: opts.scheduler.ip().to_string(),
        scheduler_port: opts.scheduler.port(),
        work_dir: opts.work_dir.clone(),
        executor_heartbeat_interval_seconds: opts.heartbeat_s,
        task_scheduling_policy: policy(opts.pull),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        ..ExecutorProcessConfig::default()
    };
    if opts.concurrent_tasks > 0 {
        config.concurrent_tasks = opts.concurrent_tasks;
    }
    start_executor_process(Arc::new(config)).await.map_err(|e| FleetError::Ballista(e.to_string()))
}
