//! What the headless-browser tests need, shared by `serve`'s and `tracecube`'s (the
//! latter includes this file by path): Chromium and Python's `websocket-client`.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRACECUBE_CHROMIUM") {
        return Some(p.into());
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].iter().map(PathBuf::from).find(|p| p.exists())
}

fn python_has_websocket() -> bool {
    Command::new("python3").args(["-c", "import websocket"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// The Chromium to drive, when the browser test can run here. Otherwise says why and
/// returns `None` (the test is skipped), or fails when `TRACECUBE_REQUIRE_BROWSER=1`
/// (set by `.ci/run`).
pub fn chromium_or_skip() -> Option<PathBuf> {
    let required = std::env::var("TRACECUBE_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let (chrome, ws) = (chromium(), python_has_websocket());
    if chrome.is_none() || !ws {
        let why = format!("chromium {}, python3 websocket-client {}", if chrome.is_some() { "found" } else { "missing" }, if ws { "found" } else { "missing" });
        assert!(!required, "TRACECUBE_REQUIRE_BROWSER=1 but the browser test cannot run: {why}");
        testkit::skip("browser", &format!("{why} (apt-get install chromium; pip install websocket-client)"));
        return None;
    }
    chrome
}
