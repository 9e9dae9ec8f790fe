//! The one reader of LTTng event headers: [`Layout::read`], generic over how the
//! header's fields are found.
//!
//! An LTTng event header is a tag, then one of two forms the tag selects: the *short*
//! form, whose tag is the event id, with a timestamp of a few bits (the compact header:
//! a 5-bit id and a 27-bit timestamp; the large one: a 16-bit id and a 32-bit timestamp),
//! and the *extended* form (tag 31, or 65535), with a 32-bit id and a 64-bit timestamp.
//! A [`Layout`] says where the tag and each form's fields lie; a [`Source`] reads them:
//!
//! - by word loads ([`WordField`]s, [`WordLayout`]): from the packet's bytes
//!   ([`Words`]), or from a header's first 16 bytes loaded at once ([`Block`]: LTTng's
//!   layouts, whose fields all lie there);
//! - bit by bit ([`FixedInt`]s, [`Bits`]): any layout the plan recognises, at any
//!   position, every bound checked (the path of the headers word loads do not read).
//!
//! Every loop that passes over events reads headers through [`Layout::read`] (inlined),
//! with LTTng's two little-endian layouts as constants ([`WordLayout::LTTNG_COMPACT_LE`],
//! [`WordLayout::LTTNG_LARGE_LE`]): each loop compiled for one of them has its shifts,
//! masks and tag ranges folded in.

use crate::bits::{read_be, read_le};
use crate::plan::{low_mask, FastHeader, FixedInt, HeaderLayout};
use crate::units::{BitPos, ByteOffset, Cycles};

/// A header field read by one 8-byte load, in the header's byte order, `byte` bytes
/// from the header's first byte: `(word >> shift) & mask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordField {
    /// Bytes from the header's first byte to the loaded word's.
    pub byte: usize,
    /// Right shift of the field in the word.
    pub shift: u32,
    /// Mask of the field's bits, once shifted.
    pub mask: u64,
}

impl WordField {
    /// The field's value in `word`.
    #[inline(always)]
    pub fn of(self, word: u64) -> u64 {
        (word >> self.shift) & self.mask
    }
}

/// A field of a header, as one kind of [`Source`] finds it.
pub trait Field: Copy {
    /// The mask of the low bits the field's values fill (its width).
    fn mask(self) -> u64;
}

impl Field for WordField {
    #[inline(always)]
    fn mask(self) -> u64 {
        self.mask
    }
}

impl Field for FixedInt {
    #[inline(always)]
    fn mask(self) -> u64 {
        low_mask(self.bits)
    }
}

/// One form of an event header: the tags that select it, where its fields lie, its
/// size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form<F> {
    /// The tag values `lo..=hi` that select this form.
    pub tags: (u64, u64),
    /// The event id (`None`: the tag is the id, as in the short form).
    pub id: Option<F>,
    /// The timestamp: the low bits of the clock.
    pub ts: F,
    /// The header's size in this form, in bits from its aligned start.
    pub bits: u64,
}

impl<F: Field> Form<F> {
    /// Whether tag `tag` selects this form.
    #[inline(always)]
    fn selects(&self, tag: u64) -> bool {
        tag.wrapping_sub(self.tags.0) <= self.tags.1.wrapping_sub(self.tags.0)
    }

    /// Reads this form's fields from `src`, the header's tag being `tag`.
    #[inline(always)]
    fn read(&self, src: &mut impl Source<F>, tag: u64, ext: bool) -> Result<HeaderWord, NotRead> {
        if !src.holds(self.bits) {
            return Err(NotRead::Bytes);
        }
        let id = match self.id {
            Some(f) => src.field(f).ok_or(NotRead::Bytes)?,
            None => tag,
        };
        let ts = src.field(self.ts).ok_or(NotRead::Bytes)?;
        Ok(HeaderWord { tag, id, ts, ext, bits: self.bits, ts_mask: self.ts.mask() })
    }
}

/// Where an event header's fields lie: its tag, its two forms, its alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout<F> {
    /// Alignment of the header, in bits.
    pub align: u32,
    /// The tag (the enumeration that selects the form).
    pub tag: F,
    /// The short form.
    pub short: Form<F>,
    /// The extended form (`None`: this reader does not read it, the general path does).
    pub ext: Option<Form<F>>,
}

/// A header layout read by word loads.
pub type WordLayout = Layout<WordField>;

impl WordLayout {
    /// LTTng's compact header, little-endian, byte-aligned: a 5-bit tag, then a 27-bit
    /// timestamp (short form, tags 0 to 30), or, after tag 31, a 32-bit id and a 64-bit
    /// timestamp from the second byte on (13 bytes in all).
    pub const LTTNG_COMPACT_LE: WordLayout = Layout {
        align: 8,
        tag: WordField { byte: 0, shift: 0, mask: 31 },
        short: Form { tags: (0, 30), id: None, ts: WordField { byte: 0, shift: 5, mask: (1 << 27) - 1 }, bits: 32 },
        ext: Some(Form {
            tags: (31, 31),
            id: Some(WordField { byte: 1, shift: 0, mask: 0xffff_ffff }),
            ts: WordField { byte: 5, shift: 0, mask: u64::MAX },
            bits: 104,
        }),
    };

    /// LTTng's large header, little-endian, byte-aligned: a 16-bit tag, then a 32-bit
    /// timestamp (short form, tags 0 to 65534), or, after tag 65535, a 32-bit id and a
    /// 64-bit timestamp from the third byte on (14 bytes in all).
    pub const LTTNG_LARGE_LE: WordLayout = Layout {
        align: 8,
        tag: WordField { byte: 0, shift: 0, mask: 0xffff },
        short: Form { tags: (0, 65534), id: None, ts: WordField { byte: 0, shift: 16, mask: 0xffff_ffff }, bits: 48 },
        ext: Some(Form {
            tags: (65535, 65535),
            id: Some(WordField { byte: 2, shift: 0, mask: 0xffff_ffff }),
            ts: WordField { byte: 6, shift: 0, mask: u64::MAX },
            bits: 112,
        }),
    };

    /// Whether [`Block`] reads every field of this layout: all lie in the header's
    /// first 16 bytes.
    #[inline(always)]
    pub fn in_block(&self) -> bool {
        let fits = |f: WordField| f.byte <= 8;
        fits(self.tag) && fits(self.short.ts) && self.ext.is_some_and(|x| x.id.is_none_or(fits) && fits(x.ts))
    }
}

impl<F: Field> Layout<F> {
    /// Reads the header whose fields `src` finds: its tag, then the form the tag
    /// selects. [`NotRead::Tag`] where the tag selects no form this layout reads.
    #[inline(always)]
    pub fn read(&self, src: &mut impl Source<F>) -> Result<HeaderWord, NotRead> {
        let tag = src.field(self.tag).ok_or(NotRead::Bytes)?;
        if self.short.selects(tag) {
            return self.short.read(src, tag, false);
        }
        match &self.ext {
            Some(x) if x.selects(tag) => x.read(src, tag, true),
            _ => Err(NotRead::Tag(tag)),
        }
    }
}

/// An event header, read.
#[derive(Debug, Clone, Copy)]
pub struct HeaderWord {
    /// The tag.
    pub tag: u64,
    /// The event class id.
    pub id: u64,
    /// The timestamp's bits (the low bits of the clock; of the extended form's
    /// timestamp when `ext`).
    pub ts: u64,
    /// Whether the header has the extended form.
    pub ext: bool,
    /// The header's size in bits, from its aligned start.
    pub bits: u64,
    /// The mask of the timestamp's bits (its width).
    pub ts_mask: u64,
}

impl HeaderWord {
    /// The clock after this header, the clock before it being `clock`.
    #[inline(always)]
    pub fn clock_after(&self, clock: Cycles) -> Cycles {
        clock.extended(self.ts, self.ts_mask)
    }

    /// Whether the clock went back from `clock` to `after` (its
    /// [`clock_after`](HeaderWord::clock_after)), which the loops leave to the general
    /// path to judge (`StreamCursor::check_back`, which the general decoder reaches
    /// by the same test). A full 64-bit timestamp (the extended form's) sets the clock
    /// back by being lower; an N-bit one only moves it forward, except where that
    /// carries it past 2^64 cycles: the 64-bit clock then wraps to a low value, which
    /// is time going back as every reader holds the clock.
    #[inline(always)]
    pub fn went_back(&self, clock: Cycles, after: Cycles) -> bool {
        after < clock
    }

    /// Whether the loops leave the event to the general path for its clock value
    /// `after` (its [`clock_after`](HeaderWord::clock_after)): the clock went back from
    /// `clock` ([`went_back`](HeaderWord::went_back)), or `after` lies past `last`, the
    /// last clock value whose time from the clock's origin fits 64-bit nanoseconds
    /// (beyond it, the general path reports the event's time as out of range).
    #[inline(always)]
    pub fn leaves_loops(&self, clock: Cycles, after: Cycles, last: u64) -> bool {
        self.went_back(clock, after) || after.0 > last
    }
}

/// Why [`Layout::read`] read no header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRead {
    /// A field, or the form, lies beyond what the source reads.
    Bytes,
    /// The tag (this value) selects no form the layout reads.
    Tag(u64),
}

/// Where [`Layout::read`] finds a header's fields of type `F`.
pub trait Source<F> {
    /// The value of field `f`; `None` where it cannot be read here.
    fn field(&mut self, f: F) -> Option<u64>;
    /// Whether the header's first `bits` bits may be read (lie inside the packet's
    /// content, where the source checks that).
    fn holds(&mut self, bits: u64) -> bool;
}

/// Loads a word of byte order `be` from 8 bytes.
#[inline(always)]
fn word(bytes: [u8; 8], be: bool) -> u64 {
    if be {
        u64::from_be_bytes(bytes)
    } else {
        u64::from_le_bytes(bytes)
    }
}

/// Word loads from a packet's bytes: the header's first byte is `at`, and `room` bits
/// of content lie from there on.
#[derive(Debug, Clone, Copy)]
pub struct Words<'a> {
    /// The packet's bytes.
    pub buf: &'a [u8],
    /// The header's first byte.
    pub at: ByteOffset,
    /// Bits of content from `at` on.
    pub room: u64,
    /// Big-endian words.
    pub be: bool,
}

impl Source<WordField> for Words<'_> {
    #[inline(always)]
    fn field(&mut self, f: WordField) -> Option<u64> {
        let from = self.at.get() + f.byte;
        let bytes: [u8; 8] = self.buf.get(from..from + 8)?.try_into().ok()?;
        Some(f.of(word(bytes, self.be)))
    }

    #[inline(always)]
    fn holds(&mut self, bits: u64) -> bool {
        bits <= self.room
    }
}

/// A header's first 16 bytes, loaded at once (one bounds check): every field of a
/// layout [in the block](WordLayout::in_block). It checks no content bound: the caller
/// checks where the event ends.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    /// The bytes.
    pub bytes: &'a [u8; 16],
    /// Big-endian words.
    pub be: bool,
}

impl<'a> Block<'a> {
    /// The 16 bytes of `buf` from byte `at`, where there are 16.
    #[inline(always)]
    pub fn at(buf: &'a [u8], at: ByteOffset, be: bool) -> Option<Block<'a>> {
        let bytes = buf.get(at.get()..at.get() + 16)?.try_into().ok()?;
        Some(Block { bytes, be })
    }
}

impl Source<WordField> for Block<'_> {
    #[inline(always)]
    fn field(&mut self, f: WordField) -> Option<u64> {
        Some(f.of(word(self.bytes[f.byte..f.byte + 8].try_into().unwrap_or_default(), self.be)))
    }

    #[inline(always)]
    fn holds(&mut self, _bits: u64) -> bool {
        true
    }
}

/// Bit-level reads of a header at bit `base` of a packet whose content ends at bit
/// `end`: any layout, any position. A read past the content is refused, and the bits
/// it needed (from `base`) kept in `needed`.
#[derive(Debug, Clone, Copy)]
pub struct Bits<'a> {
    /// The packet's bytes.
    pub buf: &'a [u8],
    /// Big-endian fields.
    pub be: bool,
    /// The header's (aligned) first bit.
    pub base: BitPos,
    /// The content's end.
    pub end: BitPos,
    /// Of a refused read: the bits it needed, from `base`.
    pub needed: u64,
}

impl Bits<'_> {
    /// Whether `bits` bits from `base` lie in the content (else noted in `needed`).
    #[inline(always)]
    fn check(&mut self, bits: u64) -> bool {
        let ok = bits <= self.base.bits_to(self.end);
        if !ok {
            self.needed = bits;
        }
        ok
    }
}

impl Source<FixedInt> for Bits<'_> {
    #[inline(always)]
    fn field(&mut self, f: FixedInt) -> Option<u64> {
        if !self.check(f.offset + u64::from(f.bits)) {
            return None;
        }
        let at = self.base.add_bits(f.offset);
        Some(if self.be { read_be(self.buf, at, f.bits) } else { read_le(self.buf, at, f.bits) })
    }

    #[inline(always)]
    fn holds(&mut self, bits: u64) -> bool {
        self.check(bits)
    }
}

impl FastHeader {
    /// Reads the header that starts at aligned bit `base` of `buf`, whose content ends
    /// at bit `end`, by word loads ([`Words`]). `None` where word loads do not read it
    /// there (near the buffer's end, a form not laid out in whole bytes, a tag outside
    /// both forms, too few bits left): the bit-level path then decodes it or reports
    /// why not.
    #[inline(always)]
    pub fn peek(&self, buf: &[u8], base: BitPos, end: BitPos) -> Option<HeaderWord> {
        // LTTng's layouts with their constants.
        match self.layout {
            HeaderLayout::LttngCompactLe => peek_as(&WordLayout::LTTNG_COMPACT_LE, false, buf, base, end),
            HeaderLayout::LttngLargeLe => peek_as(&WordLayout::LTTNG_LARGE_LE, false, buf, base, end),
            HeaderLayout::Other => peek_as(self.words.as_ref()?, self.be, buf, base, end),
        }
    }
}

/// [`FastHeader::peek`] for a header of word layout `layout`, of byte order `be`.
#[inline(always)]
fn peek_as(layout: &WordLayout, be: bool, buf: &[u8], base: BitPos, end: BitPos) -> Option<HeaderWord> {
    if base > end {
        return None;
    }
    // (`base` is on a byte: word layouts are aligned to bytes.)
    layout.read(&mut Words { buf, at: base.bytes_floor(), room: base.bits_to(end), be }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact header (tag 31: extended) and a large one, each read by both word
    /// sources, give the fields the layout's constants say.
    #[test]
    fn lttng_layouts_read_by_words_and_blocks() {
        let mut buf = vec![0u8; 32];
        // Compact, short: id 7, timestamp 0x123_4567.
        let w = 7u32 | 0x123_4567 << 5;
        buf[..4].copy_from_slice(&w.to_le_bytes());
        fn words(buf: &[u8], room: u64) -> Words<'_> {
            Words { buf, at: ByteOffset::new(0), room, be: false }
        }
        let h = WordLayout::LTTNG_COMPACT_LE.read(&mut words(&buf, 256)).unwrap();
        assert_eq!((h.tag, h.id, h.ts, h.ext, h.bits), (7, 7, 0x123_4567, false, 32));
        assert_eq!(WordLayout::LTTNG_COMPACT_LE.read(&mut words(&buf, 31)).unwrap_err(), NotRead::Bytes);
        // Compact, extended: tag 31, id 500, timestamp 2^40 + 3.
        buf[0] = 31;
        buf[1..5].copy_from_slice(&500u32.to_le_bytes());
        buf[5..13].copy_from_slice(&((1u64 << 40) + 3).to_le_bytes());
        for h in [
            WordLayout::LTTNG_COMPACT_LE.read(&mut words(&buf, 256)).unwrap(),
            WordLayout::LTTNG_COMPACT_LE.read(&mut Block::at(&buf, ByteOffset::new(0), false).unwrap()).unwrap(),
        ] {
            assert_eq!((h.tag, h.id, h.ts, h.ext, h.bits), (31, 500, (1 << 40) + 3, true, 104));
            assert_eq!(h.clock_after(Cycles(5)), Cycles((1 << 40) + 3));
        }
        // Large, short: id 65534 (the last short tag).
        buf[..6].copy_from_slice(&[0xfe, 0xff, 1, 0, 0, 0x80]);
        let h = WordLayout::LTTNG_LARGE_LE.read(&mut words(&buf, 256)).unwrap();
        assert_eq!((h.tag, h.id, h.ts, h.ext, h.bits), (65534, 65534, 0x8000_0001, false, 48));
        assert!(WordLayout::LTTNG_COMPACT_LE.in_block() && WordLayout::LTTNG_LARGE_LE.in_block());
    }

    /// A layout without an extended form refuses its tags.
    #[test]
    fn a_tag_of_no_form_is_refused() {
        let layout = WordLayout { ext: None, ..WordLayout::LTTNG_COMPACT_LE };
        let buf = [31u8; 16];
        assert_eq!(layout.read(&mut Block::at(&buf, ByteOffset::new(0), false).unwrap()).unwrap_err(), NotRead::Tag(31));
    }
}
