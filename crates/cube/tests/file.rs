//! Cube files you can trust (issue 48): a save killed with SIGKILL at a random
//! point over an existing cube leaves the old cube or the new one, never an empty or
//! mixed one; random byte flips in a saved cube give an error or the right answer,
//! never a wrong one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cube::{Cube, CubeConfig, Request, When};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::killed::{child_dir, kill_child_after};

const OPS: [(&str, &str); 4] = [("syscall", "read"), ("syscall", "write"), ("sched", "switch"), ("irq", "timer")];

/// A cube of `n` updates over 1 200 cells; `seed` makes the old and new cubes differ.
fn build(n: u64, seed: u64) -> Cube {
    let mut c = Cube::new(CubeConfig { metrics: cube::config::default_metrics(), ..CubeConfig::fine() }).unwrap();
    let m = c.schema.metric("events").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..n {
        let op = OPS[rng.gen_range(0..4)];
        let o = c.schema.dims[4].member(&[op.0, &format!("{}_{}", op.1, rng.gen_range(0..300))]);
        let p = c.schema.dims[1].member(&[&rng.gen_range(0..4).to_string()]);
        let cell = c.cell(m, &[o, p]);
        c.add(1_000_000_000 + i * 37_000, cell, rng.gen_range(1..9)).unwrap();
    }
    c.finish().unwrap();
    c
}

/// Answers that tell cubes apart: totals by operation over the whole history, the
/// last second, and a past range, as text.
fn answers(c: &Cube) -> Result<String, cube::CubeError> {
    let mut s = String::new();
    for when in [When::At(u64::MAX), When::Last(1_000_000_000), When::Range(1_200_000_000, 1_700_000_000)] {
        let mut r = Request::new("events", when);
        r.by = vec!["operation:kind".into(), "cpu".into()];
        s += &c.query(&r)?.to_text();
    }
    Ok(s)
}

/// The environment variable naming a child run's directory.
const CHILD: &str = "CUBE_SAVE_CHILD";

/// In the child: save the new and the old cube over `dir`, in turns, until killed.
fn child(dir: &Path) {
    let (mut new, mut old) = (build(60_000, 2), build(60_000, 1));
    println!("ready");
    loop {
        cube::save(&mut new, dir).unwrap();
        cube::save(&mut old, dir).unwrap();
    }
}

#[test]
fn a_killed_save_leaves_the_old_or_the_new_cube() {
    if let Some(dir) = child_dir(CHILD) {
        return child(&dir);
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x.cube");
    let mut old = build(60_000, 1);
    cube::save(&mut old, &dir).unwrap();
    let (a_old, a_new) = (answers(&old).unwrap(), answers(&build(60_000, 2)).unwrap());
    assert_ne!(a_old, a_new);
    let mut rng = ChaCha8Rng::seed_from_u64(48);
    let mut seen = [0usize; 2];
    for trial in 0..20 {
        kill_child_after("file::a_killed_save_leaves_the_old_or_the_new_cube", CHILD, &dir, Duration::from_millis(rng.gen_range(0..400)));
        let c = cube::open(&dir).unwrap_or_else(|e| panic!("trial {trial}: {e}"));
        let a = answers(&c).unwrap();
        assert!(a == a_old || a == a_new, "trial {trial}: a mixed cube:\n{a}");
        seen[usize::from(a == a_new)] += 1;
    }
    eprintln!("after 20 kills: {} old, {} new", seen[0], seen[1]);
}

/// The files of a saved cube and their lengths.
fn files(dir: &Path) -> Vec<(PathBuf, usize)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(files(&e.path()));
        } else {
            out.push((e.path(), std::fs::metadata(e.path()).unwrap().len() as usize));
        }
    }
    out.sort();
    out
}

#[test]
fn byte_flips_give_an_error_or_the_right_answer() {
    if child_dir(CHILD).is_some() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x.cube");
    let mut c = build(20_000, 7);
    cube::save(&mut c, &dir).unwrap();
    let right = answers(&cube::open(&dir).unwrap()).unwrap();
    assert_eq!(right, answers(&c).unwrap());
    let fs = files(&dir);
    assert_eq!(fs.len(), 3, "{fs:?}");
    let mut rng = ChaCha8Rng::seed_from_u64(4848);
    let mut errors = 0;
    for flip in 0..50 {
        // Each file in turn (CURRENT is small but as important), a random byte.
        let (path, len) = &fs[flip % fs.len()];
        let at = rng.gen_range(0..*len);
        let mut bytes = std::fs::read(path).unwrap();
        let orig = bytes[at];
        bytes[at] ^= rng.gen_range(1..=255u8);
        std::fs::write(path, &bytes).unwrap();
        match cube::open(&dir).and_then(|c| answers(&c)) {
            Err(e) => {
                errors += 1;
                let msg = e.to_string();
                assert!(msg.contains("CURRENT") || msg.contains("catalog") || msg.contains("history"), "flip {flip}: unclear error {msg}");
            }
            Ok(a) => assert_eq!(a, right, "flip {flip} of {} at {at}: a wrong answer", path.display()),
        }
        bytes[at] = orig;
        std::fs::write(path, &bytes).unwrap();
    }
    assert!(errors > 40, "{errors} of 50 flips detected");
    assert_eq!(answers(&cube::open(&dir).unwrap()).unwrap(), right);
    // An edited catalog whose checksum in CURRENT was fixed up: an error or the right
    // answer, never a panic (one changed digit of each kind of index).
    let cat = fs.iter().find(|f| f.0.ends_with("catalog.json")).unwrap().0.clone();
    let cur = dir.join("CURRENT");
    let mut edits_refused = 0;
    let (text, current) = (std::fs::read_to_string(&cat).unwrap(), std::fs::read_to_string(&cur).unwrap());
    for field in [
        "\"parent\":",
        "\"level\":",
        "\"cell_cuboid\":[",
        "\"cell_nodes\":[[",
        "\"cuboid_cells\":[[",
        "\"dims\":[",
        "\"cuboids\":[",
        "\"written_to\":",
        "\"granularity_ns\":",
    ] {
        let at = text.find(field).unwrap_or_else(|| panic!("{field} in the catalog")) + field.len();
        for digit in ['9', '0'] {
            let mut edited = text.clone();
            edited.replace_range(at..at + 1, &digit.to_string());
            std::fs::write(&cat, &edited).unwrap();
            let f: Vec<&str> = current.split_whitespace().collect();
            std::fs::write(&cur, format!("{} {} {} {:08x} {}\n", f[0], f[1], f[2], crc32fast::hash(edited.as_bytes()), edited.len())).unwrap();
            // Tampering that keeps the cube consistent cannot be told from a real
            // cube; what matters is that none panics.
            edits_refused += usize::from(cube::open(&dir).and_then(|c| answers(&c)).is_err());
        }
    }
    assert!(edits_refused >= 9, "only {edits_refused} of 18 edits refused");
}

#[test]
fn an_opened_cube_indexes_its_cells_only_when_a_cell_is_asked() {
    if child_dir(CHILD).is_some() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x.cube");
    let mut c = build(20_000, 3);
    cube::save(&mut c, &dir).unwrap();
    let mut opened = cube::open(&dir).unwrap();
    // Queries read no cell index: opening builds none (a hash entry per cell).
    let before = opened.schema.cell_memory();
    assert_eq!(answers(&opened).unwrap(), answers(&c).unwrap());
    assert_eq!(opened.schema.cell_memory(), before);
    // A cell asked by its members is the one the built cube has.
    let m = c.schema.metric("events").unwrap();
    let o = c.schema.dims[4].member(&["syscall", "read_7"]);
    let p = c.schema.dims[1].member(&["2"]);
    let (o2, p2) = (opened.schema.dims[4].member(&["syscall", "read_7"]), opened.schema.dims[1].member(&["2"]));
    assert_eq!(opened.cell(m, &[o2, p2]), c.cell(m, &[o, p]));
    assert!(opened.schema.cell_memory() > before + 20 * opened.schema.cell_count() as u64 / 2);
    assert_eq!(opened.schema.cell_count(), c.schema.cell_count());
}
