//! The history file of a cube generation as it is written, and the *spill* of a
//! cube being built: with [`crate::Cube::spill_to`] a cube moves its levels' records
//! from memory into the history file of the generation [`crate::save`] will publish,
//! in runs, while it is built, so that a build holds at most about
//! [`SPILL_RECORDS`] records (and their per-key index) in memory whatever the trace's
//! length (DESIGN.md, "Bounded build memory").
//!
//! The file is written unindexed ([`HistoryStore::create_unindexed`]): each run copies
//! the committed records of in-memory segments key by key, in increasing key order;
//! a later run of the same segment continues its keys in time order, so the file
//! holds per key one chunk or more per run, which any reader of the store accepts.

use std::path::{Path, PathBuf};

use store::{HistoryStore, Key, Reader, Timestamp};

use crate::error::{CubeError, Result};

/// Records held in the in-memory segments of all levels of a spilling cube before
/// they are moved to its file (about 100 bytes each at most, with their index).
pub const SPILL_RECORDS: u64 = 1 << 18;

/// Keys copied between commits of the history file (bounds the writer's pending
/// directory entries, 64 bytes per chunk).
const COMMIT_KEYS: usize = 1 << 16;

/// Key prefix of segment `s` of level `l` in the history file (`s` below 2^24).
pub(crate) fn prefix(l: usize, s: u32) -> u64 {
    ((l as u64) << 56) | (u64::from(s) << 32)
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CubeError + '_ {
    move |source| CubeError::Io { path: path.into(), source }
}

/// Creates `dir` if needed and a new, empty generation directory in it; returns its
/// name (`gen-<ns since 1970, hex>-<pid>`).
pub(crate) fn new_generation(dir: &Path) -> Result<String> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let gen = format!("gen-{stamp:x}-{}", std::process::id());
    let gdir = dir.join(&gen);
    std::fs::create_dir(&gdir).map_err(io(&gdir))?;
    Ok(gen)
}

/// A generation's history file being written.
pub(crate) struct Sink {
    pub out: HistoryStore,
    copied: usize,
}

impl Sink {
    /// Creates the history file of generation `gen` of the cube directory `dir`.
    pub fn create(dir: &Path, gen: &str) -> Result<Sink> {
        let out = HistoryStore::create_unindexed(&dir.join(gen).join("history.tcs"), store::Config::default())?;
        Ok(Sink { out, copied: 0 })
    }

    /// Appends, as one run, the committed records of `reader` whose keys are
    /// `src_prefix | cell`, under the keys `dst_prefix | cell`.
    pub fn dump(&mut self, reader: &Reader, src_prefix: u64, dst_prefix: u64) -> Result<()> {
        self.out.restart_keys()?;
        let mut keys = reader.keys();
        keys.retain(|k| k.0 & !0xffff_ffff == src_prefix);
        keys.sort_unstable();
        for k in keys {
            for rec in reader.records(k, Timestamp(0), Timestamp(u64::MAX)) {
                let rec = rec?;
                self.out.append_parts(Key(dst_prefix | (k.0 & 0xffff_ffff)), rec.value, rec.start, rec.end)?;
            }
            self.copied += 1;
            if self.copied.is_multiple_of(COMMIT_KEYS) {
                self.out.commit()?;
            }
        }
        Ok(())
    }
}

/// A generation being written, the generation `gen` of the cube directory `dir`
/// (where a spilling cube writes, and what [`crate::save`] publishes). Dropped before
/// it is published (a failed build or save), it removes its generation, and `dir`
/// too when it made it and nothing else is there: the directory is left as it was.
pub(crate) struct Spill {
    pub dir: PathBuf,
    pub gen: String,
    pub sink: Sink,
    /// Whether `dir` did not exist before.
    made_dir: bool,
    published: bool,
}

impl Spill {
    /// Starts a new generation of the cube directory `dir`.
    pub fn create(dir: &Path) -> Result<Spill> {
        let made_dir = !dir.exists();
        let made = new_generation(dir).and_then(|gen| match Sink::create(dir, &gen) {
            Ok(sink) => Ok((gen, sink)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(dir.join(&gen));
                Err(e)
            }
        });
        match made {
            Ok((gen, sink)) => Ok(Spill { dir: dir.to_path_buf(), gen, sink, made_dir, published: false }),
            Err(e) => {
                if made_dir {
                    let _ = std::fs::remove_dir(dir);
                }
                Err(e)
            }
        }
    }

    /// Keeps the generation: `CURRENT` names it now.
    pub fn publish(&mut self) {
        self.published = true;
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(self.dir.join(&self.gen));
            if self.made_dir {
                // (Fails, and keeps it, when something else was put there meanwhile.)
                let _ = std::fs::remove_dir(&self.dir);
            }
        }
    }
}
