//! Decoding plans: the metadata compiled once into a flat arena of nodes, in which
//! every field reference (sequence length, variant tag) is a node id and every event
//! class is found by id without a name look-up.
//!
//! Each node owns one *slot*, numbered like the node: when a scalar field is decoded
//! its raw value lands in `slots[node]`, so later fields (lengths, tags) and users
//! (analyses, through [`FieldHandle`]s) read it back in O(1).

use crate::ir::*;

mod compile;
mod entry;
mod fixed;
mod header;

pub use entry::SkimEntry;
pub use fixed::{FixedSize, FlatOp, SkimOp, SkipChain, StringSkim};
pub(crate) use header::low_mask;
pub use header::{FastHeader, FixedInt, HeaderLayout};

/// Index of a node in a [`Plan`]; also the index of its value slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A handle on a field, resolved once from its name (see [`Plan::event_field`]) and
/// then read per event without any look-up (see [`crate::stream::EventRef::uint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldHandle {
    /// The field's node (and slot).
    pub node: NodeId,
    /// Whether the field is in a packet scope (valid for the whole packet).
    pub packet_level: bool,
    /// Where to read the field directly when its scope is skipped (fixed layout).
    pub lazy: Option<LazyField>,
}

/// A field at a fixed bit offset inside a fixed-layout scope that decoding skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LazyField {
    /// 0: common context, 1: specific context, 2: payload.
    pub scope: u8,
    /// Bit offset from the aligned start of the scope (handles stay small: event
    /// classes are matched and copied per event).
    pub offset: u32,
    /// When the field is an integer: its size in bits, signedness and byte order (read
    /// in place without consulting its node).
    pub int: Option<LazyInt>,
    /// When the field is a byte-aligned text array of 8-bit elements: its length in
    /// bytes (read in place by [`crate::stream::EventRef::array_bytes`]); else 0.
    pub bytes: u16,
}

/// How to read an integer field in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LazyInt {
    /// Size in bits (1..=64).
    pub bits: u8,
    /// Signed (sign-extended).
    pub signed: bool,
    /// Big-endian.
    pub be: bool,
}

/// One decoding step.
#[derive(Debug, Clone)]
pub enum Node {
    /// Integer (possibly an enumeration when `enum_idx` is set).
    Int {
        /// Alignment in bits.
        align: u32,
        /// Size in bits (1..=64).
        bits: u32,
        /// Signed.
        signed: bool,
        /// Big-endian.
        be: bool,
        /// Display base.
        base: u32,
        /// Special meaning.
        role: Option<Role>,
        /// Updates the stream's default clock.
        clock: bool,
        /// Index in [`Plan::enums`], for enumerations.
        enum_idx: Option<u32>,
        /// Shown as a boolean.
        boolean: bool,
    },
    /// IEEE 754 binary32 or binary64.
    Float {
        /// Alignment in bits.
        align: u32,
        /// 32 or 64.
        bits: u32,
        /// Big-endian.
        be: bool,
    },
    /// NUL-terminated string (slot: bit position of its first byte), in code units of
    /// `unit` bytes (1: UTF-8/ASCII; 2: UTF-16; 4: UTF-32).
    Str {
        /// Bytes per code unit.
        unit: u32,
        /// Big-endian code units.
        be: bool,
    },
    /// Optional field: `inner` is present when the selector's value is non-zero
    /// (boolean) or falls in `Plan::choices[first..first + count]` (integer).
    Optional {
        /// The selector node.
        selector: NodeId,
        /// The field when present.
        inner: NodeId,
        /// First choice (ranges meaning "present").
        first: u32,
        /// Choice count (0: boolean selector).
        count: u32,
    },
    /// Variable-length (LEB128) integer, byte-aligned.
    VarInt {
        /// Signed (sign-extended).
        signed: bool,
        /// Special meaning.
        role: Option<Role>,
    },
    /// Structure: members are `Plan::members[first..first + count]`.
    Struct {
        /// Alignment in bits.
        align: u32,
        /// First member.
        first: u32,
        /// Member count.
        count: u32,
    },
    /// Variant: choices are `Plan::choices[first..first + count]`, options (by name)
    /// `Plan::members[opts..opts + nopts]`.
    Variant {
        /// The tag node (an enumeration decoded earlier).
        tag: NodeId,
        /// First choice.
        first: u32,
        /// Choice count.
        count: u32,
        /// First option.
        opts: u32,
        /// Option count.
        nopts: u32,
    },
    /// Static array; `text` when its elements are 8-bit characters (shown as a string).
    Array {
        /// Alignment in bits.
        align: u32,
        /// Element.
        elem: NodeId,
        /// Length.
        len: u64,
        /// Array of characters.
        text: bool,
    },
    /// Sequence whose length is the value of node `len`.
    Seq {
        /// Alignment in bits.
        align: u32,
        /// Element.
        elem: NodeId,
        /// Length node.
        len: NodeId,
        /// Sequence of characters.
        text: bool,
    },
}

/// A structure member.
#[derive(Debug, Clone)]
pub struct Member {
    /// Name.
    pub name: Box<str>,
    /// Node.
    pub node: NodeId,
}

/// A variant choice: tag values `lo..=hi` select `node`.
#[derive(Debug, Clone)]
pub struct Choice {
    /// Lowest tag value.
    pub lo: i128,
    /// Highest tag value.
    pub hi: i128,
    /// Selected option.
    pub node: NodeId,
}

/// How the decoder passes over one scope of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScopeStep {
    /// The event has no such scope.
    #[default]
    Absent,
    /// Fixed layout nobody needs slots of: align, then skip `bits`.
    Skip {
        /// Alignment in bits.
        align: u32,
        /// Size in bits.
        bits: u64,
    },
    /// Decode through the interpreter.
    Decode(NodeId),
}

/// A compiled event class.
#[derive(Debug, Clone)]
pub struct EventPlan {
    /// Id within the stream class.
    pub id: u64,
    /// Name.
    pub name: Box<str>,
    /// Specific context root.
    pub context: Option<NodeId>,
    /// Payload root.
    pub payload: Option<NodeId>,
    /// Steps for the common context, the specific context and the payload.
    pub steps: [ScopeStep; 3],
    /// When every scope present is skipped: the three scopes as one skip.
    pub skip_all: Option<SkipChain>,
    /// Per scope decoded through the interpreter: how to pass over it without writing
    /// slots, when its fields are plain fixed-size fields and byte strings (see
    /// [`SkimOp`]). Used by loops that only count or pass over events.
    pub skim: [Option<Box<[SkimOp]>>; 3],
    /// Per scope decoded through the interpreter: how to decode it into the slots
    /// without walking its tree, when it holds only structures, integers without a
    /// role or clock, and byte strings (see [`FlatOp`]). The general path of events of
    /// variable size (`openat` and its path, say) takes this.
    pub flat: [Option<Box<[FlatOp]>>; 3],
}

/// A compiled stream class.
#[derive(Debug, Clone)]
pub struct StreamPlan {
    /// Stream class id.
    pub id: u64,
    /// Position of this plan in [`Plan::streams`] (lets users keep per-stream-class
    /// tables indexed directly).
    pub index: usize,
    /// Packet context root.
    pub packet_context: Option<NodeId>,
    /// Event header root.
    pub event_header: Option<NodeId>,
    /// Event common context root.
    pub common_context: Option<NodeId>,
    /// Event classes.
    pub events: Vec<EventPlan>,
    /// Index into `events` by event id, when ids are dense enough.
    by_id: Vec<u32>,
    /// Index of the default clock in the trace class's clocks.
    pub clock: Option<usize>,
    /// A compiled form of the event header when it has LTTng's shape.
    pub fast_header: Option<FastHeader>,
    /// Per event class (by index in `events`): its scopes' size when they form one
    /// [`SkipChain`] of whole bytes ([`FixedSize::NONE`] otherwise). With
    /// `fast_header`, such an event is read by word loads alone
    /// ([`FastHeader::peek`]).
    pub fixed: Vec<FixedSize>,
    /// By event id (as `by_id`): a fixed [`SkimEntry`] (class index, bytes) of the
    /// classes of `fixed` whose scopes need no alignment beyond a byte, else
    /// [`SkimEntry::STOP`]: what the reader's skimming loop reads per event.
    pub fixed_by_id: Vec<SkimEntry>,
    /// By event id: what the skimming loop passes over an event by, when it is not
    /// wanted: `fixed_by_id`'s entry for a class of fixed size; for a class whose scopes
    /// are fields of whole bytes (aligned to at most a byte) around one NUL-terminated
    /// string ([`StringSkim`]), a string [`SkimEntry`]; else [`SkimEntry::STOP`].
    pub skim_by_id: Vec<SkimEntry>,
}

impl StreamPlan {
    /// The event class with id `id`.
    #[inline]
    pub fn event(&self, id: u64) -> Option<&EventPlan> {
        self.event_index(id).map(|i| &self.events[i])
    }

    /// The index in `events` of the event class with id `id`.
    #[inline]
    pub fn event_index(&self, id: u64) -> Option<usize> {
        if let Some(&i) = self.by_id.get(id as usize) {
            return (i != u32::MAX).then_some(i as usize);
        }
        if self.by_id.is_empty() {
            return self.events.iter().position(|e| e.id == id);
        }
        None
    }
}

/// The compiled decoding plan of a whole trace class.
#[derive(Debug, Clone)]
pub struct Plan {
    /// All nodes.
    pub nodes: Vec<Node>,
    /// All structure members.
    pub members: Vec<Member>,
    /// All variant choices.
    pub choices: Vec<Choice>,
    /// Enumeration mappings by `enum_idx`.
    pub enums: Vec<Vec<EnumMapping>>,
    /// Packet header root.
    pub packet_header: Option<NodeId>,
    /// Stream classes.
    pub streams: Vec<StreamPlan>,
    /// Size in bits of each node when constant (starting at its own alignment).
    pub fixed_size: Vec<Option<u64>>,
    /// Whether decoding may skip a node: constant size, and nothing inside it is a
    /// role, a clock, a sequence length or a variant tag.
    pub skippable: Vec<bool>,
    /// Selector ranges of CTF 2 variants, until their tag is resolved (compile time).
    variant_ranges: Vec<(NodeId, OptionRanges)>,
}

/// Per variant option, the tag ranges that select it.
type OptionRanges = Vec<Vec<(i128, i128)>>;

/// An error compiling a plan (a reference that cannot be resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub String);

impl Plan {
    /// A handle on the field at `path` for events of class `ev` in stream class `sp`:
    /// searched in the payload, the specific context, the common context, the event
    /// header, the packet context and the packet header, in that order.
    pub fn event_field(&self, sp: &StreamPlan, ev: &EventPlan, path: &[&str]) -> Option<FieldHandle> {
        let event = [(ev.payload, 2u8), (ev.context, 1), (sp.common_context, 0), (sp.event_header, 3)];
        let packet = [sp.packet_context, self.packet_header];
        for (root, scope) in event {
            let Some(root) = root else { continue };
            if let Some(node) = self.find(root, path) {
                let lazy = if scope < 3 && self.skippable[root.0 as usize] {
                    let offset = self.fixed_offset(root, path)?;
                    let int = match *self.node(node) {
                        Node::Int { bits, signed, be, .. } => Some(LazyInt { bits: bits as u8, signed, be }),
                        _ => None,
                    };
                    let bytes = match *self.node(node) {
                        Node::Array { len, text: true, elem, .. } if offset % 8 == 0 && matches!(*self.node(elem), Node::Int { bits: 8, .. }) => {
                            u16::try_from(len).unwrap_or(0)
                        }
                        _ => 0,
                    };
                    u32::try_from(offset).ok().map(|offset| LazyField { scope, offset, int, bytes })
                } else {
                    None
                };
                return Some(FieldHandle { node, packet_level: false, lazy });
            }
        }
        for root in packet.into_iter().flatten() {
            if let Some(node) = self.find(root, path) {
                return Some(FieldHandle { node, packet_level: true, lazy: None });
            }
        }
        None
    }

    /// The stream class with id `id`.
    pub fn stream(&self, id: u64) -> Option<&StreamPlan> {
        self.streams.iter().find(|s| s.id == id)
    }

    /// The node of `id`.
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    /// Members of a structure node.
    pub fn struct_members(&self, first: u32, count: u32) -> &[Member] {
        &self.members[first as usize..(first + count) as usize]
    }

    /// Finds the node at `path` (member names) below `root`; arrays are crossed.
    pub fn find(&self, root: NodeId, path: &[&str]) -> Option<NodeId> {
        let mut cur = root;
        for name in path {
            while let Node::Array { elem, .. } | Node::Seq { elem, .. } = self.node(cur) {
                cur = *elem;
            }
            cur = match self.node(cur) {
                Node::Struct { first, count, .. } => self.struct_members(*first, *count).iter().find(|m| &*m.name == *name)?.node,
                Node::Variant { opts, nopts, .. } => self.struct_members(*opts, *nopts).iter().find(|m| &*m.name == *name)?.node,
                _ => return None,
            };
        }
        Some(cur)
    }
}

/// Rounds `v` up to a multiple of `a` (a power of two, or 0/1 for none).
#[inline]
pub fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        (v + a - 1) & !(a - 1)
    }
}
