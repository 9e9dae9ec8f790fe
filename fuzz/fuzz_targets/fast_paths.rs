//! The reader's fast paths against its general decoder ([`ctf::crosscheck`]): a fixed
//! LTTng kernel metadata (compact or large event headers, chosen by the first byte) and
//! the fuzzer's bytes as one data stream file. Every way of reading it (skimming with
//! packets in pairs or in turn, read-ahead with field copies, word-load headers,
//! counting two packets side by side, a reader turning between them) must give the
//! events, timestamps, field values and error (file and offset) the general decoder
//! gives. The input's layout is `ctf::crosscheck::fuzz_input_agrees`'s (which
//! `crates/ctf/tests/fuzz_regressions.rs` also runs on `regressions/fast_paths/`).
#![no_main]
use libfuzzer_sys::fuzz_target;

const COMPACT: &[u8] = include_bytes!("../data/kernel-compact.metadata");
const LARGE: &[u8] = include_bytes!("../data/kernel-large.metadata");

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ctf::crosscheck::fuzz_input_agrees(data, COMPACT, LARGE) {
        panic!("fast paths differ from the general decoder: {e}");
    }
});
