//! The cube's configuration (a TOML file, every part optional, with built-in defaults):
//! tilted-frame levels, process groups, metrics and materialization.
//!
//! ```toml
//! materialize = "partial"            # minimal | partial | full
//! degree = 1                         # one record per k changes of a cell
//! [[level]]                          # finest first
//! granularity = "1s"
//! span = "5min"
//! [[level]]
//! granularity = "5min"
//! span = "24h"
//! [groups]                           # process name → group (default group: "other")
//! web = ["nginx", "php-fpm"]
//! [[metric]]
//! name = "cpu_time"
//! measure = "cpu_ns"                 # one of MEASURES (events, cpu_ns, syscall_ns…)
//! by = ["process:tid", "cpu:cpu"]    # dimension:level of the finest cells
//! count = false                      # also keep the number of updates (count, avg)
//! extremes = false                   # also keep per-bucket min / max of the updates
//! [[cuboid]]                         # with materialize = "partial": higher levels kept
//! metric = "cpu_time"
//! by = ["process:name", "cpu:all"]
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{CubeError, Result};
use crate::time::parse_duration;

/// One level of the tilted time frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelSpec {
    /// Frame length, ns.
    pub granularity_ns: u64,
    /// How far back this level keeps frames, ns.
    pub span_ns: u64,
}

/// Which cuboids (metric × levels) are kept in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Materialization {
    /// Finest cells only; everything else aggregated at query time.
    #[default]
    Minimal,
    /// Finest cells plus the cuboids listed in the config.
    Partial,
    /// Every combination of levels.
    Full,
}

/// The measures the kernel feed adds, and what one update of each is:
/// * `events`: events (1 per event);
/// * `cpu_ns`: CPU time a thread ran (ns, at its switch out and at frame boundaries);
/// * `bytes_read`, `bytes_written`: bytes a read- or write-family syscall moved;
/// * `syscall_ns`: a system call's duration, entry → exit (at its exit);
/// * `wakeup_ns`: a wake-up's latency, wake-up → the switch that runs the task (at
///   the switch);
/// * `irq_ns`: a hard IRQ or softirq handler's run, entry → exit (at its exit);
/// * `block_ns`: a block request's latency, issue → completion (at its completion).
pub const MEASURES: [&str; 8] = ["events", "cpu_ns", "bytes_read", "bytes_written", "syscall_ns", "wakeup_ns", "irq_ns", "block_ns"];

/// A metric: a measure between dimensions at given (finest) levels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricSpec {
    /// Name used in queries.
    pub name: String,
    /// What is summed: one of [`MEASURES`].
    pub measure: String,
    /// `dimension:level` of the finest cells.
    pub by: Vec<String>,
    /// Also keep the number of updates (for `count` and `avg`).
    #[serde(default)]
    pub count: bool,
    /// Also keep the smallest and largest update per tilted-frame bucket (for `min`
    /// and `max`).
    #[serde(default)]
    pub extremes: bool,
}

/// A cuboid to materialize with [`Materialization::Partial`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CuboidSpec {
    /// The metric.
    pub metric: String,
    /// `dimension:level` for each of the metric's dimensions (missing ones: `all`).
    pub by: Vec<String>,
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CubeConfig {
    /// Tilted-frame levels, finest first; each granularity divides the next.
    pub levels: Vec<LevelSpec>,
    /// Process group → process names.
    pub groups: BTreeMap<String, Vec<String>>,
    /// Metrics.
    pub metrics: Vec<MetricSpec>,
    /// Materialization policy.
    pub materialize: Materialization,
    /// Cuboids kept with `Partial`.
    pub cuboids: Vec<CuboidSpec>,
    /// Granularity degree k: a level writes a summed cell's cumulative value at
    /// one boundary of every k at which it changed (1: every change, exact). Larger k
    /// shrinks the history; an answer may then miss up to k − 1 changes per cell and
    /// end (min / max cells are always written).
    #[serde(default = "one")]
    pub degree: u32,
}

fn one() -> u32 {
    1
}

/// The TOML form (durations as text).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlConfig {
    #[serde(default)]
    level: Vec<TomlLevel>,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    metric: Vec<MetricSpec>,
    #[serde(default)]
    materialize: Option<Materialization>,
    #[serde(default)]
    cuboid: Vec<CuboidSpec>,
    #[serde(default)]
    degree: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlLevel {
    granularity: String,
    span: String,
}

const S: u64 = 1_000_000_000;

/// The default tilted frame: 1 s for 5 min, 5 min for 24 h, 1 h for 2 weeks, 6 h for 75 days.
pub fn default_levels() -> Vec<LevelSpec> {
    vec![
        LevelSpec { granularity_ns: S, span_ns: 300 * S },
        LevelSpec { granularity_ns: 300 * S, span_ns: 86_400 * S },
        LevelSpec { granularity_ns: 3_600 * S, span_ns: 14 * 86_400 * S },
        LevelSpec { granularity_ns: 6 * 3_600 * S, span_ns: 75 * 86_400 * S },
    ]
}

/// The default metrics: events by (operation, cpu, host); CPU time by (thread, cpu,
/// host); bytes read and written by (thread, file, host); and the latencies: system
/// calls by (thread, call, host), wake-ups by (thread, cpu, host), interrupt handlers
/// by (handler, cpu, host), block requests by (issuing thread, disk, host). All but
/// `events` and `cpu_time` keep counts and per-bucket min / max (so `avg`, `min` and
/// `max` answer).
pub fn default_metrics() -> Vec<MetricSpec> {
    let m = |name: &str, measure: &str, by: &[&str], count: bool| MetricSpec {
        name: name.into(),
        measure: measure.into(),
        by: by.iter().map(|s| s.to_string()).collect(),
        count,
        extremes: count,
    };
    vec![
        m("events", "events", &["operation:name", "cpu:cpu", "machine:host"], false),
        m("cpu_time", "cpu_ns", &["process:tid", "cpu:cpu", "machine:host"], false),
        m("bytes_read", "bytes_read", &["process:tid", "file:path", "machine:host"], true),
        m("bytes_written", "bytes_written", &["process:tid", "file:path", "machine:host"], true),
        m("syscall_latency", "syscall_ns", &["process:tid", "operation:name", "machine:host"], true),
        m("sched_latency", "wakeup_ns", &["process:tid", "cpu:cpu", "machine:host"], true),
        m("irq_time", "irq_ns", &["operation:name", "cpu:cpu", "machine:host"], true),
        m("block_latency", "block_ns", &["process:tid", "operation:name", "machine:host"], true),
    ]
}

impl Default for CubeConfig {
    fn default() -> Self {
        CubeConfig {
            levels: default_levels(),
            groups: BTreeMap::new(),
            metrics: default_metrics(),
            materialize: Materialization::Minimal,
            cuboids: Vec::new(),
            degree: 1,
        }
    }
}

impl CubeConfig {
    /// Defaults with millisecond levels (1 ms / 10 s, 100 ms / 10 min, 1 s / 1 h), for
    /// short traces such as the built-in demo.
    pub fn fine() -> CubeConfig {
        let ms = 1_000_000;
        let levels = vec![
            LevelSpec { granularity_ns: ms, span_ns: 10_000 * ms },
            LevelSpec { granularity_ns: 100 * ms, span_ns: 600_000 * ms },
            LevelSpec { granularity_ns: 1_000 * ms, span_ns: 3_600_000 * ms },
        ];
        CubeConfig { levels, ..CubeConfig::default() }
    }

    /// Defaults fitted to an offline trace of `span_ns`: a trace shorter than 300 s
    /// gets a finest level of about `span / 300` (rounded down to 1, 2 or 5 × 10^k ns,
    /// at least 1 µs) that keeps 1000 frames (the whole trace), then the default
    /// levels coarser than it; longer traces get the defaults.
    pub fn for_span(span_ns: u64) -> CubeConfig {
        let mut c = CubeConfig::default();
        let target = span_ns / 300;
        if target >= S {
            return c;
        }
        let g0 = nice_floor(target.max(1_000));
        let mut levels = vec![LevelSpec { granularity_ns: g0, span_ns: g0 * 1_000 }];
        levels.extend(default_levels().into_iter().filter(|l| l.granularity_ns > g0));
        c.levels = levels;
        c
    }

    /// Parses TOML text; missing parts take the defaults.
    pub fn from_toml(text: &str) -> Result<CubeConfig> {
        let t: TomlConfig = toml::from_str(text).map_err(|e| CubeError::Config(e.to_string()))?;
        let mut c = CubeConfig::default();
        if !t.level.is_empty() {
            c.levels = t
                .level
                .iter()
                .map(|l| Ok(LevelSpec { granularity_ns: parse_duration(&l.granularity)?, span_ns: parse_duration(&l.span)? }))
                .collect::<Result<_>>()?;
        }
        c.groups = t.groups;
        if !t.metric.is_empty() {
            c.metrics = t.metric;
        }
        if let Some(m) = t.materialize {
            c.materialize = m;
        }
        c.cuboids = t.cuboid;
        c.degree = t.degree.unwrap_or(1);
        c.validate()?;
        Ok(c)
    }

    /// Reads a TOML file.
    pub fn load(path: &Path) -> Result<CubeConfig> {
        let text = std::fs::read_to_string(path).map_err(|source| CubeError::Io { path: path.into(), source })?;
        Self::from_toml(&text)
    }

    /// Checks the levels (1 to 16, granularities > 0, each dividing the next,
    /// each span at least its granularity) and the metrics (at least one, each of a
    /// known measure).
    pub fn validate(&self) -> Result<()> {
        if self.levels.is_empty() || self.levels.len() > crate::dirty::MAX_LEVELS {
            return Err(CubeError::Config(format!("from 1 to {} levels are needed", crate::dirty::MAX_LEVELS)));
        }
        for (i, l) in self.levels.iter().enumerate() {
            if l.granularity_ns == 0 || l.span_ns < l.granularity_ns {
                return Err(CubeError::Config(format!("level {i}: granularity must be > 0 and at most the span")));
            }
            if i > 0 && l.granularity_ns % self.levels[i - 1].granularity_ns != 0 {
                return Err(CubeError::Config(format!("level {i}: granularity must be a multiple of level {}'s", i - 1)));
            }
        }
        if self.degree == 0 {
            return Err(CubeError::Config("degree must be at least 1".into()));
        }
        if self.metrics.is_empty() {
            return Err(CubeError::Config("at least one metric is needed".into()));
        }
        if let Some(m) = self.metrics.iter().find(|m| !MEASURES.contains(&m.measure.as_str())) {
            return Err(CubeError::Config(format!("metric {}: unknown measure {:?} (one of {})", m.name, m.measure, MEASURES.join(", "))));
        }
        Ok(())
    }

    /// The group of a process name (`other` when in none).
    pub fn group_of(&self, name: &str) -> &str {
        self.groups.iter().find(|(_, v)| v.iter().any(|n| n == name)).map_or("other", |(g, _)| g)
    }
}

/// The largest 1, 2 or 5 × 10^k at most `x` (x ≥ 1).
fn nice_floor(x: u64) -> u64 {
    let mut p = 1u64;
    while p.saturating_mul(10) <= x {
        p *= 10;
    }
    [5, 2, 1].into_iter().map(|m| m * p).find(|&v| v <= x).unwrap_or(p)
}

/// Splits `dim:level` (level defaults to the dimension's leaf when absent).
pub fn split_dim_level(s: &str) -> (&str, Option<&str>) {
    match s.split_once(':') {
        Some((d, l)) => (d.trim(), Some(l.trim())),
        None => (s.trim(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_roundtrip() {
        let c = CubeConfig::from_toml("materialize = \"full\"\n[[level]]\ngranularity = \"1ms\"\nspan = \"1s\"\n[groups]\nweb = [\"nginx\"]\n").unwrap();
        assert_eq!(c.levels, vec![LevelSpec { granularity_ns: 1_000_000, span_ns: S }]);
        assert_eq!(c.group_of("nginx"), "web");
        assert_eq!(c.group_of("bash"), "other");
        assert_eq!(c.materialize, Materialization::Full);
        assert!(CubeConfig::from_toml("[[level]]\ngranularity = \"3s\"\nspan = \"1s\"\n").is_err());
        assert!(CubeConfig::from_toml("bogus = 1").is_err());
    }

    #[test]
    fn the_readme_example_parses() {
        let readme = include_str!("../../../README.md");
        let start = readme.find("```toml\n# Which cuboids").expect("the README's cube config example") + 8;
        let text = &readme[start..start + readme[start..].find("```").unwrap()];
        let c = CubeConfig::from_toml(text).unwrap();
        assert_eq!((c.levels.len(), c.metrics.len(), c.cuboids.len(), c.materialize), (2, 2, 1, Materialization::Partial));
        assert_eq!(c.group_of("rustc"), "build");
        crate::Cube::new(c).unwrap();
    }

    #[test]
    fn levels_fit_the_span() {
        // A 14 s trace: 20 ms frames (700 points), the whole trace kept, then 1 s, 5 min, 1 h.
        let c = CubeConfig::for_span(14 * S);
        assert_eq!(c.levels[0], LevelSpec { granularity_ns: 20_000_000, span_ns: 20 * S });
        assert_eq!(c.levels.iter().map(|l| l.granularity_ns).skip(1).collect::<Vec<_>>(), vec![S, 300 * S, 3_600 * S, 6 * 3_600 * S]);
        c.validate().unwrap();
        CubeConfig::for_span(1).validate().unwrap();
        assert_eq!(CubeConfig::for_span(1).levels[0].granularity_ns, 1_000);
        assert_eq!(CubeConfig::for_span(3_600 * S).levels, default_levels());
    }
}
