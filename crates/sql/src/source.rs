//! The traces a session queries: the trace sets opened from the command line, the
//! name of each trace (its `trace` column) and the engine's slices of each set, which
//! are the units the scans share out among their partitions.

use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(test)]
use std::time::SystemTime;

use ctf::trace::TraceSet;
use engine::{Partition, Slice};

use crate::SqlError;

/// One trace set (a directory given on the command line) with its traces' names.
pub struct Source {
    /// The directory it was opened from.
    pub path: PathBuf,
    /// The open set, shared by the scan threads.
    pub set: Arc<TraceSet>,
    /// The `trace` column's value of each trace of the set (by trace index).
    pub names: Vec<String>,
}

impl Source {
    /// Opens the set below `p`, with the reader's warnings (each naming `p`).
    fn open(p: &Path) -> Result<(Source, Vec<String>), SqlError> {
        let set = TraceSet::open(p).map_err(|e| SqlError::Open(p.display().to_string(), e.to_string()))?;
        let warnings = set.warnings.iter().map(|w| format!("{}: {w}", p.display())).collect();
        let names = (0..set.traces.len()).map(|t| trace_name(&set, t, p)).collect();
        Ok((Source { path: p.to_path_buf(), set: Arc::new(set), names }, warnings))
    }
}

/// The sets opened by this process, by path ([`Sources::open_cached`]).
mod cache {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::SystemTime;

    use super::Source;
    use crate::SqlError;

    /// The files of each trace below a directory ([`ctf::trace::trace_dirs`]: the
    /// stream files, `metadata` and `index/`, links followed) with their sizes and
    /// modification times, sorted.
    type Stamp = Vec<(PathBuf, u64, Option<SystemTime>)>;

    /// At most this many sets are kept (then the cache starts again empty).
    const MAX_SETS: usize = 64;

    /// A set opened, with what its directory held then.
    struct Cached {
        stamp: Stamp,
        set: Arc<ctf::trace::TraceSet>,
        names: Vec<String>,
        warnings: Vec<String>,
    }

    fn sets() -> &'static Mutex<HashMap<PathBuf, Cached>> {
        static SETS: OnceLock<Mutex<HashMap<PathBuf, Cached>>> = OnceLock::new();
        SETS.get_or_init(Mutex::default)
    }

    /// What the traces below `dir` hold now (None: they cannot be listed; the set is
    /// then opened afresh, which says why).
    pub(super) fn stamp(dir: &Path) -> Option<Stamp> {
        let mut out = Vec::new();
        for trace in ctf::trace::trace_dirs(dir).ok()? {
            let index = trace.join("index");
            for d in [trace, index] {
                let Ok(entries) = std::fs::read_dir(&d) else { continue };
                for e in entries {
                    let path = e.ok()?.path();
                    let m = std::fs::metadata(&path).ok()?;
                    if !m.is_dir() {
                        out.push((path, m.len(), m.modified().ok()));
                    }
                }
            }
        }
        out.sort();
        Some(out)
    }

    /// The set below `p`: the one opened before when `p` holds the same files, else
    /// opened now (and kept).
    pub(super) fn open(p: &Path) -> Result<(Source, Vec<String>), SqlError> {
        let Some(now) = stamp(p) else { return Source::open(p) };
        let mut sets = sets().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = sets.get(p).filter(|c| c.stamp == now) {
            return Ok((Source { path: p.to_path_buf(), set: c.set.clone(), names: c.names.clone() }, c.warnings.clone()));
        }
        // Opened under the lock: tasks that need the same set wait for one opening.
        let (src, warnings) = Source::open(p)?;
        if sets.len() >= MAX_SETS {
            sets.clear();
        }
        sets.insert(p.to_path_buf(), Cached { stamp: now, set: src.set.clone(), names: src.names.clone(), warnings: warnings.clone() });
        Ok((src, warnings))
    }
}

/// Every trace set of a session, and how scans cut them.
pub struct Sources {
    /// The sets, in the order given.
    pub sets: Vec<Source>,
    /// How many partitions a scan has (0: the core count).
    pub partitions: usize,
}

impl Sources {
    /// Opens the traces below each of `paths`; warnings of the reader (what was found
    /// but left out) are returned, to be shown by the caller.
    pub fn open(paths: &[PathBuf], partitions: usize) -> Result<(Sources, Vec<String>), SqlError> {
        Sources::open_each(paths, partitions, Source::open)
    }

    /// [`Sources::open`], sharing the sets that this process opened before from the
    /// same paths while their files are unchanged (same names, sizes and modification
    /// times): a cluster's executor decodes a plan per task ([`crate::wire`]), and
    /// opening a set reads its metadata and indexes its packets.
    pub fn open_cached(paths: &[PathBuf], partitions: usize) -> Result<(Sources, Vec<String>), SqlError> {
        Sources::open_each(paths, partitions, cache::open)
    }

    fn open_each(
        paths: &[PathBuf],
        partitions: usize,
        open: impl Fn(&Path) -> Result<(Source, Vec<String>), SqlError>,
    ) -> Result<(Sources, Vec<String>), SqlError> {
        let mut sets = Vec::new();
        let mut warnings = Vec::new();
        for p in paths {
            let (src, w) = open(p)?;
            sets.push(src);
            warnings.extend(w);
        }
        Ok((Sources { sets, partitions }, warnings))
    }

    /// The number of partitions of a scan (at least 1).
    pub fn partition_count(&self) -> usize {
        match self.partitions {
            0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            n => n,
        }
    }

    /// The work of a scan restricted to `[begin, end]` (ns, inclusive), shared out
    /// among `parts` partitions: partition `k` gets every `parts`-th slice of every
    /// set, starting at the `k`-th, as `(set index, slice)`. Slices that do not meet
    /// the range are dropped (their events would all be skipped).
    pub fn share(&self, parts: usize, range: (i64, i64)) -> Vec<Vec<(usize, Slice)>> {
        let mut all = Vec::new();
        for (i, s) in self.sets.iter().enumerate() {
            let chunk = engine::auto_chunk_size(&s.set, parts);
            let slices = engine::partition(&s.set, Partition::Hybrid, chunk);
            all.extend(engine::clip(&slices, range).into_iter().map(|sl| (i, sl)));
        }
        let mut out: Vec<Vec<(usize, Slice)>> = (0..parts).map(|_| Vec::new()).collect();
        for (k, w) in all.into_iter().enumerate() {
            out[k % parts].push(w);
        }
        out
    }
}

/// The `trace` column of trace `t` of `set`: its `env.hostname`, else the name of its
/// directory (else of the directory opened).
fn trace_name(set: &TraceSet, t: usize, opened: &Path) -> String {
    let tr = &set.traces[t];
    match tr.class.env("hostname") {
        Some(ctf::ir::EnvValue::Str(s)) if !s.is_empty() => s.clone(),
        Some(ctf::ir::EnvValue::Int(i)) => i.to_string(),
        _ => tr.dir.file_name().or(opened.file_name()).map_or_else(|| opened.display().to_string(), |n| n.to_string_lossy().into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of the committed kernel fixture.
    fn fixture_copy(dir: &Path) -> PathBuf {
        let to = dir.join("kernel");
        let mut todo = vec![(testkit::fixture("kernel"), to.clone())];
        while let Some((from, to)) = todo.pop() {
            std::fs::create_dir_all(&to).unwrap();
            for e in std::fs::read_dir(&from).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    todo.push((e.path(), to.join(e.file_name())));
                } else {
                    std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
                }
            }
        }
        to
    }

    #[test]
    fn cached_sets_are_shared_until_a_file_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fixture_copy(tmp.path());
        let paths = [dir.clone()];
        let first = Sources::open_cached(&paths, 2).unwrap().0;
        let again = Sources::open_cached(&paths, 2).unwrap().0;
        assert!(Arc::ptr_eq(&first.sets[0].set, &again.sets[0].set), "unchanged: the same set");
        assert_eq!(first.sets[0].names, again.sets[0].names);
        assert!(!Arc::ptr_eq(&first.sets[0].set, &Sources::open(&paths, 2).unwrap().0.sets[0].set), "open does not share");
        // A file modified (its time moved): opened again.
        let meta = dir.join("metadata");
        let f = std::fs::File::options().append(true).open(&meta).unwrap();
        f.set_modified(SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
        let changed = Sources::open_cached(&paths, 2).unwrap().0;
        assert!(!Arc::ptr_eq(&first.sets[0].set, &changed.sets[0].set), "a changed file: a new set");
        // A file added: opened again too; a missing directory is the open's error.
        std::fs::write(dir.join("extra"), b"x").unwrap();
        let added = Sources::open_cached(&paths, 2).unwrap().0;
        assert!(!Arc::ptr_eq(&changed.sets[0].set, &added.sets[0].set));
        // A trace added in a subfolder: opened again, with both traces.
        fixture_copy(&dir.join("sub"));
        let nested = Sources::open_cached(&paths, 2).unwrap().0;
        assert!(!Arc::ptr_eq(&added.sets[0].set, &nested.sets[0].set));
        assert_eq!(nested.sets[0].set.traces.len(), 2);
        let gone = [tmp.path().join("none")];
        let e = Sources::open_cached(&gone, 2).err().unwrap().to_string();
        assert!(e.starts_with("cannot open trace") && e.contains("none"), "{e}");
    }
}
