//! The cube file: a directory holding `history.tcs` (one `store` file with every
//! retained segment of every level) and `catalog.json` (configuration, dimensions
//! with their members, metrics, cuboids, cells, and per segment its range and base
//! values). See DESIGN.md, "Cube file".

use std::path::Path;

use serde::{Deserialize, Serialize};
use store::{HistoryStore, Key, Reader, Timestamp};

use crate::config::{CubeConfig, LevelSpec};
use crate::cube::Cube;
use crate::error::{CubeError, Result};
use crate::schema::Schema;
use crate::tilt::{Hist, Level, Segment};

/// Version of the catalog format.
pub const CATALOG_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct SegmentMeta {
    start: u64,
    end: u64,
    base: Vec<i64>,
}

#[derive(Serialize, Deserialize)]
struct LevelMeta {
    spec: LevelSpec,
    expired: bool,
    written_to: Option<u64>,
    records: u64,
    segments: Vec<SegmentMeta>,
}

#[derive(Serialize, Deserialize)]
struct Catalog {
    version: u32,
    config: CubeConfig,
    schema: Schema,
    levels: Vec<LevelMeta>,
    span: Option<(u64, u64)>,
    updates: u64,
}

/// Key prefix of segment `s` of level `l` in the history file.
fn prefix(l: usize, s: usize) -> u64 {
    ((l as u64) << 56) | ((s as u64) << 32)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CubeError + '_ {
    move |source| CubeError::Io { path: path.into(), source }
}

/// Writes `cube` (flushed) to the directory `dir` (created; existing files replaced).
pub fn save(cube: &mut Cube, dir: &Path) -> Result<()> {
    cube.flush()?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let hist = dir.join("history.tcs");
    if hist.exists() {
        std::fs::remove_file(&hist).map_err(io(&hist))?;
    }
    let mut out = HistoryStore::open(&hist, store::Config::default())?;
    let mut levels = Vec::new();
    for (li, l) in cube.levels.iter().enumerate() {
        let mut segments = Vec::new();
        for (si, seg) in l.segs.iter().enumerate() {
            let r: Reader = match &seg.hist {
                Hist::Mem(s) => s.reader(),
                Hist::File { reader, .. } => reader.clone(),
            };
            let src_prefix = match &seg.hist {
                Hist::Mem(_) => 0,
                Hist::File { prefix, .. } => *prefix,
            };
            let mut keys = r.keys();
            keys.retain(|k| k.0 & !0xffff_ffff == src_prefix);
            keys.sort();
            for k in keys {
                for rec in r.records(k, Timestamp(0), Timestamp(u64::MAX)) {
                    let rec = rec?;
                    out.append_parts(Key(prefix(li, si) | (k.0 & 0xffff_ffff)), rec.value, rec.start, rec.end)?;
                }
            }
            segments.push(SegmentMeta { start: seg.start, end: seg.end, base: seg.base.clone() });
        }
        levels.push(LevelMeta { spec: l.spec, expired: l.expired, written_to: l.written_to, records: l.records, segments });
    }
    out.commit()?;
    let cat = Catalog { version: CATALOG_VERSION, config: cube.config.clone(), schema: cube.schema.clone(), levels, span: cube.span, updates: cube.updates };
    let path = dir.join("catalog.json");
    let text = serde_json::to_vec(&cat).map_err(|e| CubeError::Catalog { path: path.clone(), reason: e.to_string() })?;
    std::fs::write(&path, text).map_err(io(&path))
}

/// Opens a cube directory written by [`save`], read-only, with the same queries.
pub fn open(dir: &Path) -> Result<Cube> {
    let path = dir.join("catalog.json");
    let text = std::fs::read(&path).map_err(io(&path))?;
    let cat: Catalog = serde_json::from_slice(&text).map_err(|e| CubeError::Catalog { path: path.clone(), reason: e.to_string() })?;
    if cat.version != CATALOG_VERSION {
        return Err(CubeError::Catalog { path, reason: format!("version {} (this build reads {CATALOG_VERSION})", cat.version) });
    }
    let reader = Reader::open_read_only(&dir.join("history.tcs"), 256)?;
    let mut cube = Cube::new(cat.config)?;
    let mut schema = cat.schema;
    schema.reindex();
    cube.schema = schema;
    cube.sync_cells();
    cube.cum_live = false;
    cube.span = cat.span;
    cube.updates = cat.updates;
    cube.levels = cat
        .levels
        .into_iter()
        .enumerate()
        .map(|(li, m)| {
            let segs = m
                .segments
                .into_iter()
                .enumerate()
                .map(|(si, s)| Segment { start: s.start, end: s.end, base: s.base, hist: Hist::File { reader: reader.clone(), prefix: prefix(li, si) } })
                .collect();
            Level::from_file(m.spec, segs, m.expired, m.written_to, m.records)
        })
        .collect();
    Ok(cube)
}
