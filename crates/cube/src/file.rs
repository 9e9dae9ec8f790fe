//! The cube file: a directory whose `CURRENT` names one *generation* subdirectory
//! holding `history.tcs` (one `store` file with every retained segment of every
//! level) and `catalog.json` (configuration, dimensions with their members, metrics,
//! cuboids, cells, per segment its range and base values, and the history file's
//! length, CRC-32 and record count). See DESIGN.md, "Cube file".
//!
//! Saving writes a new generation beside the old one and then replaces `CURRENT`
//! by a rename (atomic), so a crash at any point leaves the old cube or the new
//! one, never an empty or mixed one. Opening verifies the catalog against the
//! CRC-32 in `CURRENT` and the history file against the catalog: any damaged or
//! edited byte is a clear error naming the file.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use store::Reader;

use crate::config::{CubeConfig, LevelSpec};
use crate::cube::Cube;
use crate::error::{CubeError, Result};
use crate::schema::Schema;
use crate::spill::{io, prefix, Spill};
use crate::tilt::{Hist, Level, Segment};

/// Version of the catalog format.
pub const CATALOG_VERSION: u32 = 2;

/// First word of `CURRENT`.
const MAGIC: &str = "tracecube-cube";

#[derive(Serialize, Deserialize)]
struct SegmentMeta<'a> {
    start: u64,
    end: u64,
    /// (Borrowed from the cube when written: a save holds no copy of the bases.)
    base: Cow<'a, [i64]>,
    /// Its number in the history file's keys (absent: its position in the level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<u32>,
}

#[derive(Serialize, Deserialize)]
struct LevelMeta<'a> {
    spec: LevelSpec,
    expired: bool,
    written_to: Option<u64>,
    records: u64,
    segments: Vec<SegmentMeta<'a>>,
}

/// What the catalog knows of the history file, checked on open.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct HistoryMeta {
    bytes: u64,
    crc32: u32,
    records: u64,
}

/// The catalog as written: [`Catalog`] borrowing the cube's configuration and schema
/// (a copy of a schema of millions of cells would double the memory of a save).
#[derive(Serialize)]
struct CatalogRef<'a> {
    version: u32,
    history: HistoryMeta,
    config: &'a CubeConfig,
    schema: &'a Schema,
    levels: Vec<LevelMeta<'a>>,
    span: Option<(u64, u64)>,
    updates: u64,
}

#[derive(Deserialize)]
struct Catalog {
    version: u32,
    history: HistoryMeta,
    config: CubeConfig,
    schema: Schema,
    levels: Vec<LevelMeta<'static>>,
    span: Option<(u64, u64)>,
    updates: u64,
}

/// Whether `dir` holds a cube written by [`save`].
pub fn is_cube(dir: &Path) -> bool {
    dir.join("CURRENT").is_file()
}

fn catalog_err(path: &Path, reason: impl Into<String>) -> CubeError {
    CubeError::Catalog { path: path.into(), reason: reason.into() }
}

/// Writes `bytes` to `path` and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::File::create(path).map_err(io(path))?;
    f.write_all(bytes).map_err(io(path))?;
    f.sync_all().map_err(io(path))
}

/// A writer that passes bytes on and keeps their CRC-32 and count.
struct Summing<W> {
    inner: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> Write for Summing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the catalog to `path` as JSON, synced, without holding its text (a
/// catalog of millions of cells takes hundreds of MB); returns its CRC-32 and length.
fn write_catalog(path: &Path, cat: &CatalogRef<'_>) -> Result<(u32, u64)> {
    let f = std::fs::File::create(path).map_err(io(path))?;
    let mut w = Summing { inner: std::io::BufWriter::with_capacity(1 << 16, f), crc: crc32fast::Hasher::new(), len: 0 };
    serde_json::to_writer(&mut w, cat).map_err(|e| catalog_err(path, e.to_string()))?;
    w.flush().map_err(io(path))?;
    let f = w.inner.into_inner().map_err(|e| CubeError::Io { path: path.into(), source: e.into_error() })?;
    f.sync_all().map_err(io(path))?;
    Ok((w.crc.finalize(), w.len))
}

/// Syncs a directory's entries (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Length and CRC-32 of a file (read in pieces: a history may be large).
fn crc_of(path: &Path) -> Result<(u64, u32)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(io(path))?;
    let (mut h, mut len, mut buf) = (crc32fast::Hasher::new(), 0u64, vec![0u8; 1 << 20]);
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            return Ok((len, h.finalize()));
        }
        h.update(&buf[..n]);
        len += n as u64;
    }
}

/// Writes `cube` (flushed) to the directory `dir` (created if needed). An existing
/// cube there is replaced atomically: the new generation is written and synced
/// first, then `CURRENT` is renamed over the old one, then the old generation goes.
pub fn save(cube: &mut Cube, dir: &Path) -> Result<()> {
    cube.flush()?;
    // A spilling cube's records are partly in its generation's history already (in
    // segments numbered by `id`); the rest follows them there. Until it is published,
    // a failure drops the generation (and `dir`, if it made it).
    let (mut sp, spilled) = match cube.spill.take() {
        Some(sp) if sp.dir == dir => (sp, true),
        Some(sp) => {
            return Err(CubeError::Io { path: dir.into(), source: std::io::Error::other(format!("the cube spills to {}, not here", sp.dir.display())) })
        }
        None => (Spill::create(dir)?, false),
    };
    let (gen, sink) = (sp.gen.clone(), &mut sp.sink);
    let gdir = dir.join(&gen);
    let hist = gdir.join("history.tcs");
    let mut levels = Vec::new();
    for (li, l) in cube.levels.iter().enumerate() {
        let mut segments = Vec::new();
        for (si, seg) in l.segs.iter().enumerate() {
            let id = if spilled { seg.id } else { si as u32 };
            if let Some((r, src_prefix)) = seg.reader() {
                sink.dump(&r, src_prefix, prefix(li, id))?;
            }
            segments.push(SegmentMeta { start: seg.start, end: seg.end, base: Cow::Borrowed(&seg.base), id: spilled.then_some(id) });
        }
        levels.push(LevelMeta { spec: l.spec, expired: l.expired, written_to: l.written_to, records: l.records, segments });
    }
    sink.out.commit()?;
    let records = sink.out.appended();
    let (bytes, crc32) = crc_of(&hist)?;
    let cat = CatalogRef {
        version: CATALOG_VERSION,
        history: HistoryMeta { bytes, crc32, records },
        config: &cube.config,
        schema: &cube.schema,
        levels,
        span: cube.span,
        updates: cube.updates,
    };
    let path = gdir.join("catalog.json");
    let (crc, len) = write_catalog(&path, &cat)?;
    sync_dir(&gdir);
    // The switch: CURRENT names the new generation and the catalog's checksum.
    let tmp = dir.join("CURRENT.tmp");
    write_synced(&tmp, format!("{MAGIC} {CATALOG_VERSION} {gen} {crc:08x} {len}\n").as_bytes())?;
    let cur = dir.join("CURRENT");
    std::fs::rename(&tmp, &cur).map_err(io(&cur))?;
    sp.publish();
    drop(sp);
    sync_dir(dir);
    // Older generations (and a cube of the first format) are no longer named.
    for e in std::fs::read_dir(dir).map_err(io(dir))?.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("gen-") && name != gen {
            let _ = std::fs::remove_dir_all(e.path());
        } else if name == "catalog.json" || name == "history.tcs" {
            let _ = std::fs::remove_file(e.path());
        }
    }
    Ok(())
}

/// The error of opening `dir`, which has no `CURRENT`: no cube, or a build into it
/// that was killed before its save (its unnamed generation, which the next save into
/// `dir` removes).
fn not_a_cube(dir: &Path) -> CubeError {
    let orphans = std::fs::read_dir(dir).map(|es| es.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("gen-")).count()).unwrap_or(0);
    let why = match std::fs::metadata(dir) {
        Err(_) => "no such directory",
        Ok(m) if !m.is_dir() => "not a directory",
        Ok(_) if orphans > 0 => "no CURRENT: a `cube build` into it stopped before its save; the next build into it removes what that left",
        Ok(_) => "no CURRENT",
    };
    catalog_err(dir, format!("not a cube ({why})"))
}

/// Reads `CURRENT`: the generation directory and the catalog's CRC-32 and length.
fn current(dir: &Path) -> Result<(PathBuf, u32, u64)> {
    let cur = dir.join("CURRENT");
    if !cur.is_file() && dir.join("catalog.json").is_file() {
        return Err(catalog_err(
            &dir.join("catalog.json"),
            format!("written by an older tracecube (catalog version 1; this build reads {CATALOG_VERSION}): rebuild the cube"),
        ));
    }
    if !cur.exists() {
        return Err(not_a_cube(dir));
    }
    let text = std::fs::read(&cur).map_err(io(&cur))?;
    let text = String::from_utf8_lossy(&text);
    let f: Vec<&str> = text.split_whitespace().collect();
    let bad = |why: &str| catalog_err(&cur, format!("{why} (expected `{MAGIC} {CATALOG_VERSION} gen-… CRC LEN`, found {:?})", text.trim()));
    let [magic, version, gen, crc, len] = f[..] else { return Err(bad("damaged")) };
    if magic != MAGIC || !gen.starts_with("gen-") || gen.contains(['/', '\\']) || gen.contains("..") {
        return Err(bad("damaged"));
    }
    if version != CATALOG_VERSION.to_string() {
        return Err(bad(&format!("version {version} (this build reads {CATALOG_VERSION})")));
    }
    let crc = u32::from_str_radix(crc, 16).map_err(|_| bad("damaged checksum"))?;
    let len = len.parse().map_err(|_| bad("damaged length"))?;
    Ok((dir.join(gen), crc, len))
}

/// Opens a cube directory written by [`save`], read-only, with the same queries.
/// The catalog and the history file are checked against their checksums first.
pub fn open(dir: &Path) -> Result<Cube> {
    let (gdir, crc, len) = current(dir)?;
    let path = gdir.join("catalog.json");
    let text = std::fs::read(&path).map_err(io(&path))?;
    if text.len() as u64 != len || crc32fast::hash(&text) != crc {
        return Err(catalog_err(
            &path,
            format!("damaged: {} bytes with CRC-32 {:08x}, CURRENT says {len} bytes with {crc:08x}", text.len(), crc32fast::hash(&text)),
        ));
    }
    let cat: Catalog = serde_json::from_slice(&text).map_err(|e| catalog_err(&path, e.to_string()))?;
    if cat.version != CATALOG_VERSION {
        return Err(catalog_err(&path, format!("version {} (this build reads {CATALOG_VERSION})", cat.version)));
    }
    let hist = gdir.join("history.tcs");
    let (bytes, crc32) = crc_of(&hist)?;
    if (bytes, crc32) != (cat.history.bytes, cat.history.crc32) {
        return Err(catalog_err(
            &hist,
            format!("damaged: {bytes} bytes with CRC-32 {crc32:08x}, the catalog says {} bytes with {:08x}", cat.history.bytes, cat.history.crc32),
        ));
    }
    let reader = Reader::open_read_only(&hist, 256)?;
    if reader.record_count() != cat.history.records {
        return Err(catalog_err(&hist, format!("holds {} records, the catalog says {}", reader.record_count(), cat.history.records)));
    }
    cat.schema.validate().map_err(|e| catalog_err(&path, e))?;
    let mut cube = Cube::new(cat.config)?;
    let mut schema = cat.schema;
    schema.reindex();
    cube.schema = schema;
    cube.sync_cells();
    cube.cum_live = false;
    cube.span = cat.span;
    cube.updates = cat.updates;
    if cat.levels.len() != cube.config.levels.len() || cat.levels.iter().zip(&cube.config.levels).any(|(m, s)| m.spec != *s) {
        return Err(catalog_err(&path, "its levels differ from its config's"));
    }
    cube.levels = cat
        .levels
        .into_iter()
        .enumerate()
        .map(|(li, m)| {
            let segs = m
                .segments
                .into_iter()
                .enumerate()
                .map(|(si, s)| {
                    let id = s.id.unwrap_or(si as u32);
                    Segment {
                        start: s.start,
                        end: s.end,
                        base: s.base.into_owned(),
                        hist: Hist::File { reader: reader.clone(), prefix: prefix(li, id) },
                        id,
                        spilled: false,
                    }
                })
                .collect();
            Level::from_file(m.spec, segs, m.expired, m.written_to, m.records)
        })
        .collect();
    Ok(cube)
}
