//! Metadata and data stream both fuzzed: input = metadata bytes, SEP, stream bytes.
//! Decodes arbitrary streams with arbitrary (parsable) decoding plans.
//! Errors are fine; only a panic, hang or OOM is a finding.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

const SEP: &[u8] = b"\n%%STREAM%%\n";

fuzz_target!(|data: &[u8]| {
    let Some(at) = data.windows(SEP.len()).position(|w| w == SEP) else { return };
    common::decode_all(&data[..at], &data[at + SEP.len()..]);
});
