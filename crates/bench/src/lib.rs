//! The benchmark harnesses behind `tracecube bench`, kept out of the library crates
//! they measure:
//!
//! - [`speedup`]: time, speedup and parallel efficiency at 1, 2, 4 … N threads, and
//!   its table;
//! - [`analyses`]: that table for each analysis on a trace (`tracecube bench analyze`);
//! - [`cube_experiments`]: the cube paper's experiments on synthesized update streams
//!   (`tracecube bench cube`, `cargo run --release -p bench --example cube_bench`).
#![forbid(unsafe_code)]

pub mod analyses;
pub mod cube_experiments;
pub mod speedup;
