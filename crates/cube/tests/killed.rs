//! Killing a build or a save midway, as a crash would: a test runs itself again as a
//! child process, which works in a directory named by an environment variable and
//! prints `ready` once it has begun; the parent kills it (SIGKILL: no destructor runs)
//! a chosen time after that, then checks what the directory holds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// In a child run: the directory to work in, from environment variable `var`.
pub fn child_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from)
}

/// Runs test `test` (`FILE::TEST`) of this binary as a child with `var` set to `dir`,
/// waits for its `ready` line, lets it run `after` more and kills it.
pub fn kill_child_after(test: &str, var: &str, dir: &Path, after: Duration) {
    let mut p = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(var, dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(p.stdout.take().unwrap());
    while !line.contains("ready") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the child ended early");
    }
    std::thread::sleep(after);
    p.kill().unwrap();
    p.wait().unwrap();
}
