//! The crate's integration tests, one binary (one link) for all of them: each
//! file of `tests/` is a module here, and its tests are named `FILE::TEST`.

mod browser;
/// Chromium for the browser test, shared with the serve crate's tests.
#[path = "../../serve/tests/support/browser.rs"]
mod browser_support;
mod cli;
mod cluster;
mod corruption;
mod cube_files;
mod damaged_streams;
mod export;
mod filters;
mod fixtures;
mod golden;
mod live_lttng;
mod print;
mod serve;
mod sql_cube;
mod support;
