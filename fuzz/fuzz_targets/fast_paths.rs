//! The reader's fast paths against its general decoder ([`ctf::crosscheck`]): a fixed
//! LTTng kernel metadata (compact or large event headers, chosen by the first byte) and
//! the fuzzer's bytes as one data stream file. Every way of reading it (skimming with
//! packets in pairs or in turn, read-ahead with field copies, word-load headers,
//! counting two packets side by side, a reader turning between them) must give the
//! events, timestamps, field values and error (file and offset) the general decoder
//! gives. Input: byte 0 = metadata (bit 0) and how many of the next bytes are turns
//! (bits 1..5); bytes 1..9 = the mask of wanted classes (little-endian u64); then the
//! turns (each mod 4, see `crosscheck::read_fast`); then the stream bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};

const COMPACT: &[u8] = include_bytes!("../data/kernel-compact.metadata");
const LARGE: &[u8] = include_bytes!("../data/kernel-large.metadata");

fn set(metadata: &[u8], stream: &[u8]) -> ctf::trace::TraceSet {
    let mut set = ctf::trace::TraceSet::in_memory(Path::new("fuzz"));
    set.add_memory_trace(Path::new("fuzz"), metadata).expect("the fixed metadata compiles");
    set.set_memory_files(0, vec![(PathBuf::from("channel0_0"), stream.to_vec())]);
    set
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let metadata = if data[0] & 1 == 0 { COMPACT } else { LARGE };
    let n_turns = usize::from(data[0] >> 1 & 31);
    let mask = u64::from_le_bytes(data[1..9].try_into().unwrap());
    let rest = &data[9..];
    let (turns, stream) = rest.split_at(n_turns.min(rest.len()));
    let fast = set(metadata, stream);
    let slow = set(metadata, stream).without_compiled_headers();
    if let Err(e) = ctf::crosscheck::fast_paths_agree(&fast, &slow, mask, turns) {
        panic!("fast paths differ from the general decoder: {e}");
    }
});
