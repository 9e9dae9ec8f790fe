//! A fixed LTTng-UST-like metadata (fuzz/data/metadata: compact and large event
//! headers, variants, sequences, strings, floats, enums) + the fuzzer's bytes as one
//! data stream file: index it, read every item, render it as JSON.
//! Errors are fine; only a panic, hang or OOM is a finding.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::decode_all(include_bytes!("../data/metadata"), data);
});
