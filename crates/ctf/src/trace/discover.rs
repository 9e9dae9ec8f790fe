//! Finding traces and their stream files on disk, as people really lay them out:
//! symbolic links are followed (a folder of links named `kernel`, as lttng-analyses
//! wants, reads as the trace it points to), loops among them are detected, only regular
//! files are opened (a FIFO would block a read forever), and what is left out says why.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Directory depth searched for `metadata` files.
pub const MAX_DEPTH: usize = 16;

/// What a search below a path found.
#[derive(Default)]
pub(super) struct Found {
    /// Directories holding a `metadata` file.
    pub dirs: Vec<PathBuf>,
    /// Whether a directory at [`MAX_DEPTH`] had subdirectories (not searched).
    pub deeper: bool,
    /// What was left out, and why.
    pub warnings: Vec<String>,
}

/// What kind of file `md` describes, for messages ("a directory", "a FIFO", ...).
pub(super) fn kind_of(md: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = md.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Whether `dir` holds a trace's `metadata`: `Ok(false)` when it has none, an error
/// when it has one that cannot be read as a file (a directory, a FIFO, a link loop).
fn has_metadata(dir: &Path) -> Result<bool> {
    let path = dir.join("metadata");
    match std::fs::metadata(&path) {
        Ok(md) if md.is_file() => Ok(true),
        Ok(md) => Err(Error::Layout { path, msg: format!("is {}, not a regular file: no metadata to read", kind_of(&md)) }),
        // (A link to nothing is no metadata; a loop of links is an error.)
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::Io { path, err }),
    }
}

/// Every directory at or below `root` (or the directory of a `metadata` file given
/// directly) that holds a trace.
pub(super) fn find_traces(root: &Path) -> Result<Found> {
    let md = std::fs::metadata(root).map_err(|err| Error::Io { path: root.into(), err })?;
    let mut found = Found::default();
    if !md.is_dir() {
        if root.file_name().is_some_and(|n| n == "metadata") {
            let dir = root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            has_metadata(dir)?;
            found.dirs.push(dir.into());
            return Ok(found);
        }
        return Err(Error::Layout { path: root.into(), msg: format!("is {}: give a trace directory or its `metadata` file", kind_of(&md)) });
    }
    let mut seen = HashSet::new();
    walk(root, &md, 0, &mut seen, &mut found)?;
    Ok(found)
}

fn walk(dir: &Path, md: &Metadata, depth: usize, seen: &mut HashSet<(u64, u64)>, out: &mut Found) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if !seen.insert((md.dev(), md.ino())) {
        out.warnings.push(format!("{}: a directory already searched (a loop of symbolic links?): not searched again", dir.display()));
        return Ok(());
    }
    if has_metadata(dir)? {
        out.dirs.push(dir.into());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(|err| Error::Io { path: dir.into(), err })?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') || name == "index" {
            continue;
        }
        let path = e.path();
        // (Links followed; a broken link or a loop of links is no directory.)
        let Ok(md) = std::fs::metadata(&path) else { continue };
        if !md.is_dir() {
            continue;
        }
        if depth >= MAX_DEPTH {
            out.deeper = true;
            continue;
        }
        walk(&path, &md, depth + 1, seen, out)?;
    }
    Ok(())
}

/// The names of the stream files of the trace in `dir`, sorted: its regular files
/// (links followed) other than `metadata` and hidden ones. Other entries that are
/// not directories (FIFOs, sockets, broken links, loops of links) are left out with a
/// warning in `warnings`.
pub(super) fn stream_names(dir: &Path, warnings: &mut Vec<String>) -> Result<Vec<OsString>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|err| Error::Io { path: dir.into(), err })?.filter_map(|e| e.ok()) {
        let name = e.file_name();
        if name == "metadata" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = e.path();
        match std::fs::metadata(&path) {
            Ok(md) if md.is_file() => names.push(name),
            Ok(md) if md.is_dir() => {}
            Ok(md) => warnings.push(format!("{}: {}, not a stream file: not read", path.display(), kind_of(&md))),
            Err(err) => warnings.push(format!("{}: {err}: not read", path.display())),
        }
    }
    names.sort();
    Ok(names)
}

/// The error of a search that found no trace below `root`.
pub(super) fn no_trace(root: &Path, found: &Found) -> Error {
    if found.deeper {
        Error::Layout {
            path: root.into(),
            msg: format!("no CTF trace found within {MAX_DEPTH} directory levels (deeper directories are not searched: give a path closer to the trace)"),
        }
    } else {
        Error::NoTrace(root.into())
    }
}
