//! Damaged traces, made by a seeded generator from three small shared traces (a kernel
//! trace with an index, one without, a UST trace): truncations, bit flips in packet
//! headers, payloads, index files and metadata, absurd packet sizes, symbolic links,
//! FIFOs and stray copies. On each, `dump`, `info`, `analyze -a io` and `cube build`
//! must finish within 10 s and 1 GiB of address space, never panic, and either succeed
//! or exit non-zero with an error naming the file and the offset (or metadata line).
//! Where the damage is of the kind a reader can always see (structure, not values:
//! truncations, sizes, layouts), a success must print exactly the intact trace's dump,
//! and a failure must print a subsequence of it (each stream a prefix, merged in time).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A small seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What a variant does to its copy of the trace.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Damage {
    Truncate,
    HeaderFlip,
    PayloadFlip,
    IndexFlip,
    MetadataFlip,
    AbsurdSize,
    LinkFarm,
    LinkLoop,
    IndexFifo,
    MetadataFifo,
    StrayCopy,
}

impl Damage {
    /// Whether a reader can always see this damage: then success means the intact
    /// output, failure a subsequence of it.
    fn visible(self) -> bool {
        matches!(self, Damage::Truncate | Damage::AbsurdSize | Damage::LinkFarm | Damage::LinkLoop | Damage::IndexFifo | Damage::StrayCopy)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// The directory holding `metadata` below `root`.
fn trace_dir(root: &Path) -> PathBuf {
    if root.join("metadata").exists() {
        return root.into();
    }
    let sub = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir()).unwrap();
    trace_dir(&sub)
}

fn stream_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "metadata" && !n.to_string_lossy().starts_with('.')))
        .collect();
    v.sort();
    v
}

fn flip(path: &Path, at: u64, bit: u64) {
    let mut b = std::fs::read(path).unwrap();
    if b.is_empty() {
        return;
    }
    let i = (at as usize) % b.len();
    b[i] ^= 1 << (bit % 8);
    std::fs::write(path, b).unwrap();
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only reads it.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

/// Packets of the intact trace's stream file `file`: (offset, total bits, content bits).
fn packets_of(root: &Path, file: &Path) -> Vec<(u64, u64, u64)> {
    let set = ctf::trace::TraceSet::open(root).unwrap();
    let t = &set.traces[0];
    let f = t.files.iter().find(|f| f.path.file_name() == file.file_name()).unwrap();
    f.packets.iter().map(|p| (p.offset, p.total_bits, p.content_bits)).collect()
}

/// Applies `d` to the trace copied at `root` (trace directory `dir`).
fn damage(d: Damage, root: &Path, dir: &Path, rng: &mut Rng) {
    let files = stream_files(dir);
    let file = files[rng.below(files.len() as u64) as usize].clone();
    let len = std::fs::metadata(&file).unwrap().len();
    match d {
        Damage::Truncate => {
            let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
            f.set_len(rng.below(len)).unwrap();
        }
        Damage::HeaderFlip | Damage::AbsurdSize => {
            let packets = packets_of(root, &file);
            let (off, total, content) = packets[rng.below(packets.len() as u64) as usize];
            if d == Damage::HeaderFlip {
                flip(&file, off + rng.below(64), rng.next());
                return;
            }
            // The packet's size or content size field (64 or 32 bits, either byte
            // order), made absurd.
            let mut b = std::fs::read(&file).unwrap();
            let want = if rng.below(2) == 0 { total } else { content };
            let o = off as usize;
            let head = &b[o..(o + 128).min(b.len())];
            let forms: [Vec<u8>; 4] =
                [want.to_le_bytes().into(), want.to_be_bytes().into(), (want as u32).to_le_bytes().into(), (want as u32).to_be_bytes().into()];
            let found = forms.iter().find_map(|f| (0..head.len().saturating_sub(f.len() - 1)).find(|&i| head[i..i + f.len()] == f[..]).map(|i| (i, f.len())));
            let (at, n) = found.unwrap_or((40, 8));
            let bad = [u64::MAX, want.saturating_mul(1024), total + 8, 1 << 40][rng.below(4) as usize];
            let bytes = if n == 8 { bad.to_le_bytes().to_vec() } else { (bad as u32 | 1).to_le_bytes().to_vec() };
            b[o + at..o + at + n].copy_from_slice(&bytes);
            std::fs::write(&file, b).unwrap();
        }
        Damage::PayloadFlip => flip(&file, rng.below(len), rng.next()),
        Damage::IndexFlip => {
            let idx = dir.join("index").join(format!("{}.idx", file.file_name().unwrap().to_string_lossy()));
            if idx.is_file() {
                let n = std::fs::metadata(&idx).unwrap().len();
                flip(&idx, rng.below(n), rng.next());
            } else {
                flip(&file, rng.below(len), rng.next());
            }
        }
        Damage::MetadataFlip => {
            let m = dir.join("metadata");
            let n = std::fs::metadata(&m).unwrap().len();
            flip(&m, rng.below(n), rng.next());
        }
        Damage::LinkFarm => {
            // The trace moved aside (out of the search), a folder of links to its files
            // in its place, as users build for lttng-analyses.
            let real = root.with_file_name(format!(".{}-real", root.file_name().unwrap().to_string_lossy()));
            std::fs::rename(dir, &real).unwrap();
            std::fs::create_dir(dir).unwrap();
            for e in std::fs::read_dir(&real).unwrap() {
                let e = e.unwrap();
                std::os::unix::fs::symlink(e.path(), dir.join(e.file_name())).unwrap();
            }
        }
        Damage::LinkLoop => {
            std::os::unix::fs::symlink(dir.join("loop_b"), dir.join("loop_a")).unwrap();
            std::os::unix::fs::symlink(dir.join("loop_a"), dir.join("loop_b")).unwrap();
            std::os::unix::fs::symlink(root, dir.join("up")).unwrap();
        }
        Damage::IndexFifo => {
            let idx_dir = dir.join("index");
            std::fs::create_dir_all(&idx_dir).unwrap();
            let idx = idx_dir.join(format!("{}.idx", file.file_name().unwrap().to_string_lossy()));
            let _ = std::fs::remove_file(&idx);
            mkfifo(&idx);
            mkfifo(&dir.join("channel9_fifo"));
        }
        Damage::MetadataFifo => {
            std::fs::remove_file(dir.join("metadata")).unwrap();
            if rng.below(2) == 0 {
                mkfifo(&dir.join("metadata"));
            } else {
                std::fs::create_dir(dir.join("metadata")).unwrap();
            }
        }
        Damage::StrayCopy => {
            let copy = dir.join(format!("{}.copy", file.file_name().unwrap().to_string_lossy()));
            std::fs::copy(&file, copy).unwrap();
        }
    }
}

/// Runs the binary under 10 s of wall time and 1 GiB of address space.
fn run(args: &[&str], trace: &Path, extra: &[&Path]) -> Output {
    let mut c = Command::new("sh");
    c.arg("-c").arg("ulimit -v 1048576; exec timeout -s KILL 10 \"$0\" \"$@\"").arg(env!("CARGO_BIN_EXE_tracecube"));
    c.args(args).arg(trace).args(extra);
    c.output().unwrap()
}

/// Checks one command's outcome on a damaged copy.
fn check(what: &str, out: &Output, root: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(code.is_some(), "{what}: killed (over 10 s or 1 GiB?): {err}");
    assert!(!err.contains("panicked"), "{what}: panic: {err}");
    assert_ne!(code, Some(101), "{what}: panic exit: {err}");
    if code != Some(0) {
        let root = root.to_string_lossy().into_owned();
        let named = err.lines().any(|l| l.contains("error") && l.contains(&root));
        let located = err.contains("offset ") || err.contains("metadata line ") || err.contains("not a regular file") || err.contains(": No such file");
        assert!(named && located, "{what}: the error names no file and offset: {err}");
    }
}

fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).collect()
}

/// Whether `part` is a subsequence of `whole`.
fn subsequence(part: &[&[u8]], whole: &[&[u8]]) -> bool {
    let mut it = whole.iter();
    part.iter().all(|l| it.any(|w| w == l))
}

#[test]
fn damaged_traces_fail_cleanly_or_read_as_intact() {
    let names = ["bug446190-arm", "lttng-modules-2.0.0-ref", "ust-cyg-profile-glxgears"];
    let kinds = [
        Damage::Truncate,
        Damage::HeaderFlip,
        Damage::PayloadFlip,
        Damage::IndexFlip,
        Damage::MetadataFlip,
        Damage::AbsurdSize,
        Damage::LinkFarm,
        Damage::LinkLoop,
        Damage::IndexFifo,
        Damage::MetadataFifo,
        Damage::StrayCopy,
    ];
    let mut rng = Rng(0x7eac_ec0b_e046);
    let mut variants = 0;
    for name in names {
        let Some(src) = testkit::shared_trace("corruption", name) else { continue };
        let tmp = tempfile::tempdir().unwrap();
        let intact_root = tmp.path().join("intact");
        copy_dir(&src, &intact_root);
        let intact = run(&["dump"], &intact_root, &[]);
        assert!(intact.status.success(), "{name}: {}", String::from_utf8_lossy(&intact.stderr));
        let want = lines(&intact.stdout);
        for k in 0..36 {
            let d = kinds[k % kinds.len()];
            let root = tmp.path().join(format!("v{k}"));
            copy_dir(&src, &root);
            let dir = trace_dir(&root);
            damage(d, &root, &dir, &mut rng);
            let what = format!("{name} variant {k} ({d:?})");
            let dump = run(&["dump"], &root, &[]);
            check(&format!("{what}: dump"), &dump, &root);
            if d.visible() {
                let got = lines(&dump.stdout);
                if dump.status.success() {
                    assert!(got == want, "{what}: dump succeeds with other output than the intact trace's ({} lines, not {})", got.len(), want.len());
                } else {
                    assert!(subsequence(&got, &want), "{what}: what dump printed before its error is not the intact trace's (each stream a prefix)");
                }
            }
            check(&format!("{what}: info"), &run(&["info"], &root, &[]), &root);
            check(&format!("{what}: analyze"), &run(&["analyze", "-a", "io"], &root, &[]), &root);
            let cube = root.join("cube.out");
            check(&format!("{what}: cube build"), &run(&["cube", "build"], &root, &[Path::new("-o"), &cube]), &root);
            variants += 1;
            std::fs::remove_dir_all(&root).unwrap();
        }
    }
    if variants > 0 {
        assert!(variants >= 100, "{variants} variants");
    }
}
