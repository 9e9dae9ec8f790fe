//! What tracecube's tests share (a dev-dependency of every crate's tests, never of a
//! library): where the shared real traces are, whether a peer tool is installed, and
//! one rule for tests that cannot run here.
//!
//! The rule: a test that needs something this machine lacks (`../shared`, Babeltrace,
//! lttng-analyses, Chromium…) says so on stderr and returns, on a developer's machine;
//! in CI (`CI` set, as `.ci/run` runs) or with `TRACECUBE_REQUIRE_ALL=1` it fails
//! instead, so that a green CI never hides a test that did not run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether tests must run rather than skip: in CI (`CI` set and not `false`/`0`) or
/// with `TRACECUBE_REQUIRE_ALL=1`.
pub fn skipping_refused() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var("TRACECUBE_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

/// Reports a test that cannot run here: panics when skipping is refused (see
/// [`skipping_refused`]), otherwise says so on stderr (past the harness's capture).
pub fn skip(test: &str, why: &str) {
    assert!(!skipping_refused(), "{test} cannot run, and skipping is refused in CI: {why}");
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// The repository's root (the folder holding `crates/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's shared folder (`../shared` beside the repository), or `None` after
/// [`skip`] when it is absent.
pub fn shared(test: &str) -> Option<PathBuf> {
    let dir = repo_root().join("../shared");
    if dir.join("traces").is_dir() {
        Some(dir)
    } else {
        skip(test, &format!("{} absent", dir.display()));
        None
    }
}

/// A trace of `../shared/traces` by its relative name, or `None` after [`skip`].
pub fn shared_trace(test: &str, name: &str) -> Option<PathBuf> {
    let dir = shared(test)?.join("traces").join(name);
    if dir.exists() {
        Some(dir)
    } else {
        skip(test, &format!("{} absent", dir.display()));
        None
    }
}

/// Whether `cmd --version` runs and succeeds.
pub fn have_command(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Whether `/usr/bin/python3` imports `module` (Debian's bt2 and lttnganalyses live there).
pub fn have_python_module(python: &str, module: &str) -> bool {
    Command::new(python).args(["-c", &format!("import {module}")]).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// `true` when every command is installed; otherwise [`skip`] naming the missing ones
/// and `false`.
pub fn require_commands(test: &str, cmds: &[&str], install: &str) -> bool {
    let missing: Vec<&str> = cmds.iter().copied().filter(|c| !have_command(c)).collect();
    if missing.is_empty() {
        return true;
    }
    skip(test, &format!("{} not installed ({install})", missing.join(", ")));
    false
}
