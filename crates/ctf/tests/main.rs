//! The crate's integration tests, one binary (one link) for all of them: each
//! file of `tests/` is a module here, and its tests are named `FILE::TEST`.

mod chunking;
mod clockless;
mod common;
mod ctf2_decode;
mod fast_paths_oracle;
mod fixtures;
mod fuzz_regressions;
mod packet_context;
mod time_back;
mod word_loads;
