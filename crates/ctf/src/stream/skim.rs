//! Passing over events by their sizes: the skimming loop over runs of fixed-size events
//! (compact and extended LTTng headers read by word loads, short strings by their NUL),
//! and entering such an event as the current one without the general decoder.

use crate::event_header::{Block, HeaderWord, WordLayout, Words};
use crate::plan::{HeaderLayout, SkimEntry, StringSkim};
use crate::units::{BitPos, ByteOffset, Cycles};

use super::{ahead, EventPos, HeaderCopy, Passed, StreamCursor, Wanted};

impl<'t> StreamCursor<'t> {
    /// The skimming part of [`StreamCursor::next_wanted`] (kept out of line: a reader
    /// that wants most events never skims): passes over a run of unwanted events of
    /// fixed size, then reads the event it stopped before when that is of fixed size.
    #[inline(never)]
    pub(super) fn skim_run(&mut self, wanted: &Wanted, window: (u64, u64), passed: &mut Passed) -> SkimEnd {
        // The run's span, in locals (`lo > hi`: none passed). The clock ends at the
        // last passed event's.
        let (from, clock) = (self.cur.pos, self.dec.clock);
        let (mut lo, mut hi) = (u64::MAX, 0);
        let mut stopped = self.skim_fixed::<false>(&wanted.skim_by_id, 0, |_, clock| (lo, hi) = (lo.min(clock), hi.max(clock)));
        if lo <= hi && (lo < window.0 || hi > window.1) {
            if hi < window.0 || lo > window.1 {
                // All outside the window (the part of a packet beyond the slice).
                (lo, hi) = (u64::MAX, 0);
            } else {
                // Across the window's edge: read the run again.
                (self.cur.pos, self.dec.clock) = (from, clock);
                (stopped, (lo, hi)) = self.skim_in_window(wanted, window);
            }
        }
        let last = (self.cur.pos != from).then_some(self.dec.clock);
        passed.see_run(last, (lo, hi));
        if self.cur.pos >= self.cur.end {
            return SkimEnd::Again;
        }
        // Stopped before a wanted event: take it as the loop read it.
        if let Some(w) = stopped {
            self.take_stopped(w);
            return SkimEnd::Wanted;
        }
        // Stopped before an event of another kind: a fixed one is read fully at once.
        match self.fixed_event::<true>() {
            Some(class) if wanted.has(class as usize) => SkimEnd::Wanted,
            Some(_) => {
                passed.see(self.dec.clock, window);
                SkimEnd::Again
            }
            None => SkimEnd::General,
        }
    }

    /// The skim run of [`StreamCursor::next_wanted`] again, for a run that crosses the
    /// window's edge (a few per slice): returns where it stopped and the span of the
    /// passed events inside the window.
    #[cold]
    #[inline(never)]
    fn skim_in_window(&mut self, wanted: &Wanted, window: (u64, u64)) -> (Option<Stopped>, (u64, u64)) {
        let (mut lo, mut hi) = (u64::MAX, 0);
        let stopped = self.skim_fixed::<false>(&wanted.skim_by_id, 0, |_, clock| {
            if clock >= window.0 && clock <= window.1 {
                (lo, hi) = (lo.min(clock), hi.max(clock));
            }
        });
        (stopped, (lo, hi))
    }

    /// Passes over the open packet's events, from the cursor on, for as long as each
    /// has a header [`StreamCursor::fixed_event`] reads and an id whose entry in `table`
    /// (one of [`Wanted`]'s tables, or [`StreamPlan::skim_by_id`](crate::plan::StreamPlan::skim_by_id)) passes it over (a
    /// fixed size, or a [`StringSkim`] layout whose string ends inside the packet) and,
    /// with `STOP`, a clock value below `stop_at`, calling `see(class, clock)` for each.
    /// The event it stops before is left unread, for the general path; when its entry
    /// is [taken](SkimEntry::taken) (a wanted class of fixed size) and it lies inside the
    /// packet, it is returned as read.
    /// Only the position and the clock change: skimmed events write no slot. The whole
    /// loop runs on locals.
    ///
    /// LTTng's two little-endian header layouts get loops of their own, compiled with
    /// the layout's constants (fewer live values in the loop, fewer spills).
    #[inline(always)]
    pub(super) fn skim_fixed<const STOP: bool>(&mut self, table: &[SkimEntry], stop_at: u64, see: impl FnMut(u32, u64)) -> Option<Stopped> {
        self.skim_fixed_taking::<STOP, false>(table, stop_at, see, |_| false)
    }

    /// [`StreamCursor::skim_fixed`] that offers each event of fixed size it would stop
    /// before (one whose entry is [taken](SkimEntry::taken)) to `take` first: when `take`
    /// returns true (it keeps the event), the loop goes on after that event. Without
    /// `STOP` only; `TAKES` where `take` may keep events (its checks are then fewer; the
    /// loop may stop 4 GiB on in a packet).
    #[inline(always)]
    pub(super) fn skim_fixed_taking<const STOP: bool, const TAKES: bool>(
        &mut self,
        table: &[SkimEntry],
        stop_at: u64,
        see: impl FnMut(u32, u64),
        take: impl FnMut(&Stopped) -> bool,
    ) -> Option<Stopped> {
        let h = self.sp.fast_header.as_ref()?;
        match h.layout {
            HeaderLayout::LttngCompactLe => self.skim_fixed_as::<false, STOP, TAKES>(&WordLayout::LTTNG_COMPACT_LE, table, stop_at, see, take),
            HeaderLayout::LttngLargeLe => self.skim_fixed_as::<false, STOP, TAKES>(&WordLayout::LTTNG_LARGE_LE, table, stop_at, see, take),
            HeaderLayout::Other => {
                let layout = h.words.as_ref()?;
                if h.be {
                    self.skim_fixed_as::<true, STOP, TAKES>(layout, table, stop_at, see, take)
                } else {
                    self.skim_fixed_as::<false, STOP, TAKES>(layout, table, stop_at, see, take)
                }
            }
        }
    }

    /// [`StreamCursor::skim_fixed`] in byte units, for headers of byte order `BE` read by
    /// word loads in `layout`, every invariant held in a local (`STOP` and `TAKES` as
    /// there).
    #[inline(always)]
    fn skim_fixed_as<const BE: bool, const STOP: bool, const TAKES: bool>(
        &mut self,
        layout: &WordLayout,
        table: &[SkimEntry],
        stop_at: u64,
        mut see: impl FnMut(u32, u64),
        mut take: impl FnMut(&Stopped) -> bool,
    ) -> Option<Stopped> {
        let from = self.cur.pos.bytes_exact()?;
        if !layout.short.bits.is_multiple_of(8) || !layout.align.is_multiple_of(8) {
            return None;
        }
        // (The loop counts in bytes: `p`, `base`, `next` and `end` are byte indexes.)
        let buf = self.cur.buf;
        let end = self.cur.end.bytes_floor().get();
        let am = (layout.align / 8) as usize - 1;
        // Where every field lies in the header's first 16 bytes (LTTng's layouts,
        // constants there), one load and one bounds check read either form
        // ([`Block`]); a header in the file's last 16 bytes is then left to the
        // general path.
        let in_block = layout.in_block();
        let (mut p, mut clock, mut stopped) = (from.get(), self.dec.clock, None);
        let last = self.clock_last();
        // With `TAKES`, content more than 4 GiB on is left to the next run: an entry of
        // `SkimEntry::STOP` (stop there), read as a size of 2^32 - 1 bytes, then ends past
        // `end`, which so checks both.
        let end = if TAKES { end.min(p.saturating_add(u32::MAX as usize - 1)) } else { end };
        while p < end {
            let base = (p + am) & !am;
            let at = ByteOffset::new(base);
            // (Where the event ends is checked below: the header's own bound is not.)
            let read = if in_block {
                let Some(mut block) = Block::at(buf, at, BE) else { break };
                layout.read(&mut block)
            } else {
                layout.read(&mut Words { buf, at, room: u64::MAX, be: BE })
            };
            let Ok(w) = read else { break };
            let cycles = w.clock_after(Cycles(clock));
            if w.leaves_loops(Cycles(clock), cycles, last) {
                break;
            }
            let cycles = cycles.0;
            let hbytes = (w.bits / 8) as usize;
            let Some(&e) = table.get(w.id as usize) else { break };
            if e.stops() {
                // Not passed over: one of fixed size (taken, not `STOP`), inside the
                // packet, is offered to `take`, else handed over.
                let next = base + hbytes + e.bytes();
                if (!TAKES && e.is_stop()) || next > end {
                    break;
                }
                let lead = (((base - p) * 8) as u32 + w.bits as u32) | if w.ext { ahead::EXTENDED } else { 0 };
                let bit = |byte| ByteOffset::new(byte).to_bits();
                let s = Stopped { header: w, lead, start: bit(p), at: bit(base + hbytes), end: bit(next), class: e.class(), cycles };
                if !STOP && take(&s) {
                    (p, clock) = (next, cycles);
                    continue;
                }
                stopped = Some(s);
                break;
            }
            let mut next = base + hbytes + e.bytes();
            if e.is_string() {
                let Some(n) = string_end(buf, base + hbytes, end, e.string_layout()) else { break };
                next = n;
            }
            if next > end {
                break;
            }
            if STOP && cycles >= stop_at {
                break;
            }
            see(e.class(), cycles);
            (p, clock) = (next, cycles);
        }
        self.cur.pos = ByteOffset::new(p).to_bits();
        self.dec.clock = clock;
        stopped
    }

    /// Takes the event a skim run stopped before as the current one, with the effects
    /// of [`StreamCursor::fixed_event`] (header slots, clock, scopes), without reading
    /// its header again.
    #[inline(always)]
    fn take_stopped(&mut self, s: Stopped) {
        let Some(h) = self.sp.fast_header.as_ref() else { return };
        // `fixed_by_id` holds only classes aligned to at most a byte: the scopes start
        // right after the header.
        let starts = self.sp.fixed.get(s.class as usize).map_or([0; 3], |f| f.starts);
        self.enter_fixed::<true>(h, &s.header, s.class, (s.start, s.at, s.end), starts);
    }

    /// Makes a fixed-size event whose header `w` was read the current one (with `FULL`,
    /// else only the clock and position move): it starts at bit `start`, its scopes at
    /// `at` (plus `starts`), and it ends at `end`.
    #[inline(always)]
    fn enter_fixed<const FULL: bool>(
        &mut self,
        h: &crate::plan::FastHeader,
        w: &HeaderWord,
        class: u32,
        (start, at, end): (BitPos, BitPos, BitPos),
        starts: [u32; 3],
    ) {
        self.dec.take_header::<false>(h, w);
        self.cur.pos = end;
        if FULL {
            self.set_current_fixed(HeaderCopy::new(w.tag, w.ext), class, (start, at), starts, self.dec.clock, self.clock_ts());
        } else {
            self.dec.epoch = self.dec.epoch.wrapping_add(1);
        }
    }

    /// Records the fixed-size event of class `class` whose header (kept as `header`)
    /// gives clock value `cycles` (timestamp `ts`) as the current one: a new epoch and
    /// `self.ev` (first bit `start`, scopes at `at` plus `starts`). The header's slots
    /// are not written: its fields are read from `header` on demand. The position and the
    /// clock are the caller's to move.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_current_fixed(&mut self, header: HeaderCopy, class: u32, (start, at): (BitPos, BitPos), starts: [u32; 3], cycles: u64, ts: Option<i64>) {
        self.dec.epoch = self.dec.epoch.wrapping_add(1);
        let scopes = starts.map(|x| at.add_bits(u64::from(x)));
        self.ev = EventPos { class, cycles, ts, scopes, start, epoch: self.dec.epoch, header };
    }

    /// [`StreamCursor::decode_event_as`] for the common LTTng case: a header that word
    /// loads read ([`crate::plan::FastHeader::peek`]) and an event class of fixed size
    /// ([`crate::plan::FixedSize`]), so one bounds check covers the whole event and no
    /// bit-level read is made. Same effects as the general path; `None` (nothing
    /// consumed): take the general path, which also reports any error.
    #[inline(always)]
    pub(super) fn fixed_event<const FULL: bool>(&mut self) -> Option<u32> {
        let sp = self.sp;
        let h = sp.fast_header.as_ref()?;
        let start = self.cur.pos;
        let base = start.align_up(u64::from(h.align));
        let w = h.peek(self.cur.buf, base, self.cur.end)?;
        let clock = Cycles(self.dec.clock);
        if w.leaves_loops(clock, w.clock_after(clock), self.clock_last()) {
            return None;
        }
        let class = sp.event_index(w.id)?;
        let f = *sp.fixed.get(class)?;
        if !f.is_fixed() {
            return None;
        }
        let at = base.add_bits(w.bits).align_up(u64::from(f.align));
        let end = at.add_bits(u64::from(f.bits));
        if end > self.cur.end {
            return None;
        }
        self.enter_fixed::<FULL>(h, &w, class as u32, (start, at, end), f.starts);
        Some(class as u32)
    }
}

/// How [`StreamCursor::skim_run`] ended.
pub(super) enum SkimEnd {
    /// On a wanted event, now the current one.
    Wanted,
    /// Go on (at the packet's end, or after an unwanted event read fully).
    Again,
    /// Before an event only the general path reads.
    General,
}

/// An event a skim run refused ([`StreamCursor::skim_fixed`]): its header, where it
/// starts (`start`), where its scopes start (`at`) and end (`end`), in bits, and its
/// class index.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stopped {
    pub(super) header: HeaderWord,
    /// `at - start`, with [`super::ahead::EXTENDED`] when the header has the extended form
    /// (as [`Ahead`](super::Ahead) keeps it).
    pub(super) lead: u32,
    pub(super) start: BitPos,
    pub(super) at: BitPos,
    pub(super) end: BitPos,
    pub(super) class: u32,
    /// The clock value its header gives.
    pub(super) cycles: u64,
}

/// Where an event whose scopes start at byte `from` ends, by its entry `e` in a
/// skimming table ([`StreamPlan::skim_by_id`](crate::plan::StreamPlan::skim_by_id), or a [`Wanted`] table whose taken
/// entries are of fixed size): a fixed size, or a [`StringSkim`] layout's string found by
/// its NUL; `None` where it ends past `end`. (The skimming loop keeps its own copy of
/// this step: sharing it changed that loop's machine code, BENCHMARKS.md, session 32.)
#[inline(always)]
pub(super) fn entry_end(buf: &[u8], from: ByteOffset, end: ByteOffset, e: SkimEntry) -> Option<ByteOffset> {
    let next = if !e.stops() && e.is_string() { string_end(buf, from.get(), end.get(), e.string_layout())? } else { from.get() + e.bytes() };
    (next <= end.get()).then_some(ByteOffset::new(next))
}

/// Where an event of layout `layout` whose scopes start on byte `at` of `buf` ends (the
/// byte after its last), when its string's NUL lies before byte `end`.
#[inline(always)]
fn string_end(buf: &[u8], at: usize, end: usize, layout: StringSkim) -> Option<usize> {
    let from = at + usize::from(layout.prefix);
    let s = buf.get(from..end)?;
    // Names (of IRQ handlers, of programs) are short: their first eight bytes by one
    // word, the rest by `memchr`.
    let nul = match s.first_chunk::<8>().map(|w| nul_in_word(*w)) {
        Some(Some(z)) => z,
        Some(None) => 8 + memchr::memchr(0, &s[8..])?,
        None => memchr::memchr(0, s)?,
    };
    Some(from + nul + 1 + usize::from(layout.suffix))
}

/// `s` up to its first NUL byte (all of it when it has none): eight bytes at a time, as
/// character arrays such as `sched_switch`'s 16-byte `prev_comm` are short.
#[inline]
pub(super) fn until_nul(s: &[u8]) -> &[u8] {
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for w in words.by_ref() {
        if let Some(z) = nul_in_word(w.try_into().unwrap_or_default()) {
            return &s[..at + z];
        }
        at += 8;
    }
    match words.remainder().iter().position(|b| *b == 0) {
        Some(z) => &s[..at + z],
        None => s,
    }
}

/// The position of the first zero byte of `w`, if it has one.
#[inline(always)]
fn nul_in_word(w: [u8; 8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let w = u64::from_le_bytes(w);
    // The lowest flagged byte is the first zero byte (flags above it may be false).
    let zero = w.wrapping_sub(ONES) & !w & HIGHS;
    (zero != 0).then(|| (zero.trailing_zeros() / 8) as usize)
}

#[cfg(test)]
mod until_nul_tests {
    use super::until_nul;

    #[test]
    fn stops_at_the_first_nul_byte() {
        // Every length and every NUL position, with bytes that make the word trick's
        // false positives (0x01 after a zero, 0x80 and 0xff bytes) appear.
        for len in 0..40usize {
            for nul in 0..=len {
                let mut s: Vec<u8> = (0..len).map(|i| [0x01u8, 0x80, 0xff, b'a'][i % 4]).collect();
                if nul < len {
                    s[nul] = 0;
                    if nul + 1 < len {
                        s[nul + 1] = 0x01;
                    }
                }
                let want = s.iter().position(|b| *b == 0).map_or(&s[..], |z| &s[..z]);
                assert_eq!(until_nul(&s), want, "len {len}, nul {nul}");
            }
        }
    }
}
