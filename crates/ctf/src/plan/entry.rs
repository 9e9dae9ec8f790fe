//! [`SkimEntry`]: what the skimming loops read per event id, one look-up per event.

use super::StringSkim;

/// An entry of a skimming table, by event id ([`StreamPlan::fixed_by_id`](super::StreamPlan::fixed_by_id),
/// [`StreamPlan::skim_by_id`](super::StreamPlan::skim_by_id), and the tables of [`crate::stream::Wanted`]): how the
/// skimming loops pass over an event of that id, or that they stop before it.
///
/// One of:
/// - *fixed*: a class index and the size of its scopes in bytes (the event is passed
///   over by its size);
/// - *string*: a class index and a [`StringSkim`] layout (passed over by its sizes and
///   one search for a NUL);
/// - *taken*: a fixed entry of a class a reader wants ([`SkimEntry::taken`]): the loop
///   stops before it, or reads it ahead;
/// - [`SkimEntry::STOP`]: the general path reads the event.
///
/// It is one machine word (the loops keep it in a register: its tests are one bit
/// test each, its class and size one shift or mask): the class index in bits 32 to
/// 62, the size (or the string layout, with a flag in bit 31) in bits 0 to 31,
/// the taken flag in bit 63. Class indexes are below 2^31, so a fixed or string
/// entry never has bit 63; [`SkimEntry::STOP`] has every bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct SkimEntry(u64);

impl SkimEntry {
    /// The general path reads the event (also a taken entry: see the type's docs).
    pub const STOP: SkimEntry = SkimEntry(u64::MAX);

    /// The bit of a taken entry (and of [`SkimEntry::STOP`]).
    const TAKE: u64 = 1 << 63;

    /// The bit of a string entry, in its low word.
    const STRING: u64 = 1 << 31;

    /// The low word: a size in bytes, or a string layout.
    const LOW: u64 = 0xffff_ffff;

    /// A fixed entry: events of class index `class` whose scopes take `bytes` bytes.
    /// `None` where `class` is not below 2^31 or `bytes` not below 2^31.
    pub fn fixed(class: u32, bytes: u32) -> Option<SkimEntry> {
        (class < 1 << 31 && u64::from(bytes) < Self::STRING).then(|| SkimEntry(u64::from(class) << 32 | u64::from(bytes)))
    }

    /// A string entry: events of class index `class` of layout `layout` (its suffix
    /// below 2^15 bytes). `None` where `class` is not below 2^31 or the suffix too long.
    pub fn string(class: u32, layout: StringSkim) -> Option<SkimEntry> {
        let low = Self::STRING | u64::from(layout.suffix) << 16 | u64::from(layout.prefix);
        (class < 1 << 31 && layout.suffix <= 0x7fff).then(|| SkimEntry(u64::from(class) << 32 | low))
    }

    /// This fixed entry, for a class a reader wants: the loops stop before its events
    /// (or read them ahead). [`SkimEntry::STOP`] stays itself.
    #[inline]
    pub fn taken(self) -> SkimEntry {
        SkimEntry(self.0 | Self::TAKE)
    }

    /// Whether this is [`SkimEntry::STOP`].
    #[inline(always)]
    pub fn is_stop(self) -> bool {
        self == Self::STOP
    }

    /// Whether the loops stop before the event: a taken entry or [`SkimEntry::STOP`].
    #[inline(always)]
    pub fn stops(self) -> bool {
        self.0 & Self::TAKE != 0
    }

    /// Whether this is a string entry (not taken).
    #[inline(always)]
    pub fn is_string(self) -> bool {
        self.0 & Self::STRING != 0
    }

    /// The class index (of a fixed, string or taken entry).
    #[inline(always)]
    pub fn class(self) -> u32 {
        ((self.0 & !Self::TAKE) >> 32) as u32
    }

    /// The size of the scopes in bytes (of a fixed or taken entry). (Read of
    /// [`SkimEntry::STOP`]: 2^32 - 1, a size that no packet under 4 GiB holds.)
    #[inline(always)]
    pub fn bytes(self) -> usize {
        (self.0 & Self::LOW) as usize
    }

    /// The layout of a string entry ([`SkimEntry::is_string`]).
    #[inline(always)]
    pub fn string_layout(self) -> StringSkim {
        StringSkim { prefix: self.0 as u16, suffix: (self.0 >> 16) as u16 & 0x7fff }
    }
}
