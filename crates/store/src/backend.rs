//! The storage seam: the store reads and writes bytes only through [`Backend`], so
//! tests can swap in an in-memory or fault-injecting medium.

use std::fmt::Debug;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::RwLock;

/// A random-access byte medium. Implementations must be usable from several
/// threads: one writer calls `write_at`/`set_len`/`sync` while readers call
/// `read_at`.
///
/// Contract the commit protocol relies on (DESIGN.md, "Assumptions"): bytes
/// handed to `write_at` before a successful `sync` are durable after it; a
/// write never changes bytes outside its own range, even when torn.
pub trait Backend: Send + Sync + Debug {
    /// Current length in bytes.
    fn size(&self) -> io::Result<u64>;
    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read
    /// (fewer only at the end of the medium).
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes all of `data` at `pos`, growing the medium if needed.
    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()>;
    /// Truncates or zero-extends the medium to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes every completed write durable.
    fn sync(&self) -> io::Result<()>;
}

/// A [`Backend`] over a file, using positional reads and writes (no `mmap`, so
/// no `unsafe` and no SIGBUS if the file is truncated under us).
#[derive(Debug)]
pub struct FileBackend {
    file: File,
}

impl FileBackend {
    /// Opens (creating if `create`) the file at `path` for reading and writing.
    pub fn open(path: &Path, create: bool) -> io::Result<Self> {
        let file = std::fs::OpenOptions::new().read(true).write(true).create(create).truncate(false).open(path)?;
        Ok(FileBackend { file })
    }

    /// Opens the file at `path` read-only.
    pub fn open_read_only(path: &Path) -> io::Result<Self> {
        Ok(FileBackend { file: File::open(path)? })
    }
}

#[cfg(unix)]
fn pread(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}
#[cfg(unix)]
fn pwrite(file: &File, buf: &[u8], pos: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, pos)
}
#[cfg(windows)]
fn pread(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}
#[cfg(windows)]
fn pwrite(file: &File, mut buf: &[u8], mut pos: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(file, buf, pos)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
        pos += n as u64;
    }
    Ok(())
}

impl Backend for FileBackend {
    fn size(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        // Loops until the buffer is full or the file ends; each turn makes progress.
        while done < buf.len() {
            match pread(&self.file, &mut buf[done..], pos + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()> {
        pwrite(&self.file, data, pos)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// A [`Backend`] in memory: the store's in-memory mode, and the base of test media.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    bytes: RwLock<Vec<u8>>,
}

impl MemoryBackend {
    /// An empty medium.
    pub fn new() -> Self {
        Self::default()
    }

    /// A medium holding `bytes` (e.g. a crash image).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        MemoryBackend { bytes: RwLock::new(bytes) }
    }

    /// A copy of the current contents.
    pub fn snapshot(&self) -> Vec<u8> {
        self.bytes.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn to_index(pos: u64) -> io::Result<usize> {
    usize::try_from(pos).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))
}

impl Backend for MemoryBackend {
    fn size(&self) -> io::Result<u64> {
        Ok(self.bytes.read().unwrap_or_else(|e| e.into_inner()).len() as u64)
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let bytes = self.bytes.read().unwrap_or_else(|e| e.into_inner());
        let pos = to_index(pos)?;
        if pos >= bytes.len() {
            return Ok(0);
        }
        let n = buf.len().min(bytes.len() - pos);
        buf[..n].copy_from_slice(&bytes[pos..pos + n]);
        Ok(n)
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = self.bytes.write().unwrap_or_else(|e| e.into_inner());
        let pos = to_index(pos)?;
        let end = pos.checked_add(data.len()).ok_or(io::ErrorKind::InvalidInput)?;
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[pos..end].copy_from_slice(data);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = to_index(len)?;
        self.bytes.write().unwrap_or_else(|e| e.into_inner()).resize(len, 0);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}
