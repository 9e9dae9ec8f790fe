//! The crate's integration tests, one binary (one link) for all of them: each
//! file of `tests/` is a module here, and its tests are named `FILE::TEST`.

/// What the browser tests share (also with the binary's, by path).
mod support {
    pub mod browser;
}
mod api;
mod bounds;
mod browser_live;
