//! Crash consistency.
//!
//! * `sigkill_at_random_points`: a child process (this test binary re-run with
//!   `STORE_CRASH_CHILD` set) appends and commits until the parent kills it
//!   with SIGKILL; the parent reopens and checks that the store holds a prefix
//!   of the stream that includes everything the child reported committed.
//! * `every_sync_point_crash_image_reopens_consistent`: a recording backend
//!   keeps the durable image (as of the last sync) and the writes since; at
//!   each write a crash image (durable + a torn random subset of pending
//!   writes) is reopened and must equal the last or the in-flight commit.
//! * `damaged_bytes_are_errors_not_panics`: flipped bytes inside committed
//!   data are reported by `open` or `verify`.

use crate::common;

use common::{check_stream_prefix, stream_record, SharedMem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use store::{Backend, Config, HistoryStore, MemoryBackend};

const KEYS: u64 = 13;
const CHILD_ENV: &str = "STORE_CRASH_CHILD";

fn small_config() -> Config {
    Config { block_size: 4096, chunk_bytes: 128, ..Config::default() }
}

/// The writer child: continues the stream where the committed store stops and
/// appends "committed N" lines to a log after each commit returns.
#[test]
fn crash_child_writer() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    let batch: u64 = std::env::var("STORE_CRASH_BATCH").unwrap().parse().unwrap();
    let mut store = HistoryStore::open(path.as_ref(), small_config()).unwrap();
    let mut log = std::fs::OpenOptions::new().append(true).create(true).open(format!("{path}.log")).unwrap();
    let mut i = store.record_count();
    loop {
        for _ in 0..batch {
            store.append(stream_record(i, KEYS)).unwrap();
            i += 1;
        }
        store.commit().unwrap();
        // One write per line: `writeln!` may split the number and its newline
        // into two writes, and a kill between them would leave a torn line.
        log.write_all(format!("{i}\n").as_bytes()).unwrap();
        log.sync_data().unwrap();
    }
}

#[test]
fn sigkill_at_random_points() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.store");
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    let mut last_count = 0;
    for round in 0..6 {
        let batch = rng.gen_range(50..3000u64);
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash::crash_child_writer", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .env("STORE_CRASH_BATCH", batch.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(rng.gen_range(40..400)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let log_path = format!("{}.log", path.display());
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        // Only whole lines count; each round starts a fresh log, so no torn
        // line can run into the next child's first report.
        let reported: u64 = log.split_inclusive('\n').filter_map(|l| l.strip_suffix('\n')?.parse().ok()).max().unwrap_or(0);
        let _ = std::fs::remove_file(&log_path);
        let store = HistoryStore::open(&path, small_config()).unwrap();
        let m = store.record_count();
        assert!(m >= reported.max(last_count), "round {round}: store has {m}, child reported {reported}");
        check_stream_prefix(&store, m, KEYS);
        store.verify().unwrap();
        last_count = m;
    }
    assert!(last_count > 0, "the child never committed");
}

/// A medium that remembers what is durable and can produce crash images.
#[derive(Debug, Default)]
struct Recording {
    durable: Vec<u8>,
    pending: Vec<(u64, Vec<u8>)>,
    images: Vec<(Vec<u8>, u64)>, // crash image, commits completed before it
    commits_done: u64,
    rng_state: u64,
}

#[derive(Debug, Clone, Default)]
struct RecordingBackend {
    live: SharedMem,
    rec: Arc<Mutex<Recording>>,
}

fn apply(image: &mut Vec<u8>, pos: u64, data: &[u8]) {
    let pos = pos as usize;
    if image.len() < pos + data.len() {
        image.resize(pos + data.len(), 0);
    }
    image[pos..pos + data.len()].copy_from_slice(data);
}

impl Recording {
    fn next_rand(&mut self) -> u64 {
        self.rng_state = self.rng_state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.rng_state >> 33
    }

    /// Durable bytes plus a random subset of pending writes, one of them torn.
    fn crash_image(&mut self) -> Vec<u8> {
        let mut image = self.durable.clone();
        let pending = self.pending.clone();
        for (pos, data) in &pending {
            match self.next_rand() % 3 {
                0 => {}
                1 => apply(&mut image, *pos, data),
                _ => {
                    let cut = (self.next_rand() as usize) % (data.len() + 1);
                    apply(&mut image, *pos, &data[..cut]);
                }
            }
        }
        image
    }
}

impl Backend for RecordingBackend {
    fn size(&self) -> io::Result<u64> {
        self.live.size()
    }
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.live.read_at(pos, buf)
    }
    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()> {
        let mut r = self.rec.lock().unwrap();
        r.pending.push((pos, data.to_vec()));
        let image = r.crash_image();
        let done = r.commits_done;
        r.images.push((image, done));
        self.live.write_at(pos, data)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut r = self.rec.lock().unwrap();
        r.durable.resize(len as usize, 0); // metadata change: treated as durable at once
        self.live.set_len(len)
    }
    fn sync(&self) -> io::Result<()> {
        let mut r = self.rec.lock().unwrap();
        for (pos, data) in std::mem::take(&mut r.pending) {
            apply(&mut r.durable, pos, &data);
        }
        Ok(())
    }
}

#[test]
fn every_sync_point_crash_image_reopens_consistent() {
    let backend = RecordingBackend::default();
    backend.rec.lock().unwrap().rng_state = 42;
    let mut store = HistoryStore::with_backend(Box::new(backend.clone()), small_config()).unwrap();
    let mut counts = vec![0u64]; // records after each completed commit
    let mut i = 0;
    for commit in 0..12u64 {
        for _ in 0..(200 + commit * 137) {
            store.append(stream_record(i, KEYS)).unwrap();
            i += 1;
        }
        if commit % 4 == 1 {
            store.flush().unwrap();
        }
        store.commit().unwrap();
        counts.push(i);
        backend.rec.lock().unwrap().commits_done += 1;
    }
    drop(store);
    let images = std::mem::take(&mut backend.rec.lock().unwrap().images);
    assert!(images.len() > 20);
    for (n, (image, done)) in images.into_iter().enumerate() {
        let store = HistoryStore::with_backend(Box::new(MemoryBackend::from_bytes(image)), small_config()).unwrap_or_else(|e| panic!("image {n}: {e}"));
        let m = store.record_count();
        let before = counts[done as usize];
        let after = counts.get(done as usize + 1).copied().unwrap_or(before);
        assert!(m == before || m == after, "image {n}: {m} records, expected {before} or {after}");
        check_stream_prefix(&store, m, KEYS);
        store.verify().unwrap_or_else(|e| panic!("image {n}: {e}"));
    }
}

#[test]
fn damaged_bytes_are_errors_not_panics() {
    let mem = SharedMem::default();
    let mut store = HistoryStore::with_backend(Box::new(mem.clone()), small_config()).unwrap();
    for i in 0..5000 {
        store.append(stream_record(i, KEYS)).unwrap();
    }
    store.commit().unwrap();
    drop(store);
    let clean = mem.0.snapshot();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..300 {
        let mut image = clean.clone();
        let pos = rng.gen_range(store::HEADER_SIZE as usize..image.len());
        image[pos] ^= 1 << rng.gen_range(0..8);
        let outcome = HistoryStore::with_backend(Box::new(MemoryBackend::from_bytes(image)), small_config()).and_then(|s| s.verify().map(|_| ()));
        assert!(outcome.is_err(), "flip at byte {pos} went unnoticed");
    }
    // A damaged superblock slot falls back to the other one or is reported.
    for pos in 0..64 {
        let mut image = clean.clone();
        image[pos] ^= 0x10;
        image[store::HEADER_SIZE as usize / 2 + pos] ^= 0x10;
        let r = HistoryStore::with_backend(Box::new(MemoryBackend::from_bytes(image)), small_config());
        assert!(matches!(r, Err(store::Error::Corrupt(_) | store::Error::UnsupportedVersion { .. })), "byte {pos}");
    }
}
