//! F3 through the binary (issue 48): `cube build` over an existing cube, killed with
//! SIGKILL at random points 20 times; after each kill `query` answers as the old cube
//! or as the new one, never as an empty or a mixed one.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::bin;

fn query(cube: &Path) -> String {
    let out = bin().arg("query").arg(cube).args(["--metric", "events", "--by", "operation:name", "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "query: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_killed_cube_build_leaves_the_old_or_the_new_cube() {
    let dir = tempfile::tempdir().unwrap();
    let traces: Vec<_> = [1u64, 2]
        .iter()
        .map(|seed| {
            let d = dir.path().join(format!("t{seed}"));
            let out = bin().args(["synth", "--cpus", "2", "--events", "60000", "--seed", &seed.to_string(), "-o"]).arg(&d).output().unwrap();
            assert!(out.status.success());
            d
        })
        .collect();
    // Each trace's answer, from a cube of its own; and how long a build takes.
    let mut answers = Vec::new();
    let mut took = Duration::ZERO;
    for (i, t) in traces.iter().enumerate() {
        let own = dir.path().join(format!("own{i}.cube"));
        let t0 = Instant::now();
        assert!(bin().args(["cube", "build"]).arg(t).arg("-o").arg(&own).output().unwrap().status.success());
        took = took.max(t0.elapsed());
        answers.push(query(&own));
    }
    assert_ne!(answers[0], answers[1]);
    let cube = dir.path().join("x.cube");
    assert!(bin().args(["cube", "build"]).arg(&traces[0]).arg("-o").arg(&cube).output().unwrap().status.success());
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut killed_mid_build = 0;
    for trial in 0..20 {
        // Builds of the two traces take turns, so the cube there may be either.
        let mut child = bin().args(["cube", "build"]).arg(&traces[(trial + 1) % 2]).arg("-o").arg(&cube).spawn().unwrap();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(took.mul_f64((x % 1000) as f64 / 1000.0 * 1.2));
        killed_mid_build += usize::from(child.try_wait().unwrap().is_none());
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let a = query(&cube);
        assert!(a == answers[0] || a == answers[1], "trial {trial}: neither the old nor the new cube:\n{a}");
    }
    assert!(killed_mid_build >= 10, "only {killed_mid_build} of 20 kills hit a running build");
}
