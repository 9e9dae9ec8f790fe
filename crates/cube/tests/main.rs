//! The crate's integration tests, one binary (one link) for all of them: each
//! file of `tests/` is a module here, and its tests are named `FILE::TEST`.

mod file;
mod killed;
mod live;
mod model;
mod spill;
