//! What tracecube's tests share (a dev-dependency of every crate's tests, never of a
//! library): the committed fixture traces ([`fixture`]), where the shared real traces
//! are, whether a peer tool is installed, a small HTTP client ([`http`]), and one rule
//! for tests that cannot run here.
//!
//! The rule: a test that needs something this machine lacks (`../shared`, Babeltrace,
//! lttng-analyses, Chromium…) says so on stderr and returns, on a developer's machine;
//! in CI (`CI` set, as `.ci/run` runs) or with `TRACECUBE_REQUIRE_ALL=1` it fails
//! instead, so that a green CI never hides a test that did not run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub mod http;

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
    shared_path(test, &format!("traces/{name}"))
}

/// A file or folder of `../shared` by its relative path (`expected/…`, `oracle/…`), or
/// `None` after [`skip`].
pub fn shared_path(test: &str, rel: &str) -> Option<PathBuf> {
    let path = shared(test)?.join(rel);
    if path.exists() {
        Some(path)
    } else {
        skip(test, &format!("{} absent", path.display()));
        None
    }
}

/// A committed fixture of `crates/testkit/fixtures` by its name (its README says how
/// each was made): always there, so that the tests using it never skip.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// The text of a gzip-compressed file (expected outputs are committed compressed),
/// through `gzip -dc`; panics naming the file when it cannot be read.
pub fn gunzip(path: &Path) -> String {
    let out = Command::new("gzip").arg("-dc").arg(path).output().unwrap_or_else(|e| panic!("gzip -dc {}: {e}", path.display()));
    assert!(out.status.success(), "gzip -dc {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{}: not UTF-8: {e}", path.display()))
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

/// Every file below the cube directory `dir`, with its bytes, by path relative to
/// `dir`, sorted; the generation directory a save names uniquely (`gen-TIME-PID`) is
/// `gen` in the paths and in `CURRENT` (the pointer to it, a line of text), so that two
/// saves of the same cube compare equal.
pub fn cube_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.strip_prefix(dir).unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()));
            }
        }
    }
    let gens: Vec<String> = out.iter().filter_map(|(p, _)| p.split('/').find(|c| c.starts_with("gen-")).map(str::to_owned)).collect();
    let same = |s: &str| gens.iter().fold(s.to_owned(), |s, g| s.replace(g.as_str(), "gen"));
    let mut out: Vec<(String, Vec<u8>)> =
        out.into_iter().map(|(p, b)| if p == "CURRENT" { (p, same(&String::from_utf8_lossy(&b)).into_bytes()) } else { (same(&p), b) }).collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    /// A crate that gathers its integration tests into one binary (`autotests = false`,
    /// `tests/main.rs`) must declare every file of `tests/` there: Cargo would not build
    /// a file left out, and its tests would never run.
    #[test]
    fn every_integration_test_file_is_a_module_of_its_binary() {
        let crates = super::repo_root().join("crates");
        let mut checked = 0;
        for krate in std::fs::read_dir(&crates).unwrap().map(|e| e.unwrap().path()) {
            let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap_or_default();
            if !manifest.contains("autotests = false") {
                continue;
            }
            let tests = krate.join("tests");
            let main = std::fs::read_to_string(tests.join("main.rs"))
                .unwrap_or_else(|e| panic!("{}: autotests = false but {e} reading tests/main.rs", krate.display()));
            let declared: Vec<&str> = main.lines().filter_map(|l| l.trim().strip_prefix("mod ")).map(|l| l.trim_end_matches([';', '{', ' '])).collect();
            for file in std::fs::read_dir(&tests).unwrap().map(|e| e.unwrap().path()) {
                let name = file.file_stem().unwrap().to_str().unwrap();
                if file.extension().is_some_and(|x| x == "rs") && name != "main" {
                    assert!(declared.contains(&name), "{} is not a module of {} (add `mod {name};`)", file.display(), tests.join("main.rs").display());
                    checked += 1;
                }
            }
        }
        assert!(checked > 0, "no integration test file found under {}", crates.display());
    }
}
