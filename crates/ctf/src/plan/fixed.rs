//! Fixed layouts, what the fast paths read events by: scopes passed over as one skip
//! ([`SkipChain`], [`FixedSize`]), by sizes and one NUL ([`StringSkim`]), or decoded as
//! flat lists of steps ([`SkimOp`], [`FlatOp`]); computed once per plan.

use crate::decode::node_align;

use super::{align_up, EventPlan, Node, NodeId, Plan, ScopeStep};

/// A node's step in a list of steps ([`Plan::ops_of`]): a leaf's, or a structure's,
/// its members' following.
enum OpAt<T> {
    Leaf(T),
    Members(T),
}

/// One step of decoding a scope of plain fields into the decoder's slots, as the
/// interpreter would (the same slots written with the same values, the same errors at
/// the same positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlatOp {
    /// Align to `align` bits (a structure's start).
    Align(u32),
    /// Integer node `node`: its slot gets its value (sign-extended when signed).
    Int {
        /// The node.
        node: NodeId,
        /// Alignment in bits.
        align: u32,
        /// Size in bits.
        bits: u32,
        /// Signed.
        signed: bool,
        /// Big-endian.
        be: bool,
    },
    /// Byte string node `node`: its slot gets its start.
    CStr(NodeId),
}

/// One step of passing over a scope by sizes alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkimOp {
    /// Align to `align` bits, then skip `bits` (bounds checked).
    Fixed {
        /// Alignment in bits.
        align: u32,
        /// Size in bits.
        bits: u64,
    },
    /// Align to a byte, then skip a NUL-terminated byte string.
    CStr,
}

/// The scopes of an event passed over by one skip: every scope present is a
/// [`ScopeStep::Skip`] whose alignment divides the first one's, so that their offsets
/// from the first scope's aligned start do not depend on where the event lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkipChain {
    /// Alignment of the first scope present (bits).
    pub align: u32,
    /// Offset of each scope's aligned start from the first scope's (absent scopes: the
    /// offset where they would start).
    pub starts: [u64; 3],
    /// Bits from the first scope's aligned start to the end of the last one.
    pub bits: u64,
}

impl SkipChain {
    /// The chain of `steps`, if they form one.
    pub(super) fn of(steps: &[ScopeStep; 3]) -> Option<SkipChain> {
        let mut chain: Option<SkipChain> = None;
        let mut starts = [0u64; 3];
        for (k, step) in steps.iter().enumerate() {
            match *step {
                ScopeStep::Absent => starts[k] = chain.map_or(0, |c| c.bits),
                ScopeStep::Decode(_) => return None,
                ScopeStep::Skip { align, bits } => match chain.as_mut() {
                    None => {
                        starts[k] = 0;
                        chain = Some(SkipChain { align, starts, bits });
                    }
                    Some(c) => {
                        if align > c.align || c.align % align.max(1) != 0 {
                            return None;
                        }
                        let at = align_up(c.bits, align.max(1) as u64);
                        starts[k] = at;
                        c.bits = at + bits;
                    }
                },
            }
        }
        let mut c = chain.unwrap_or(SkipChain { align: 1, starts, bits: 0 });
        c.starts = starts;
        Some(c)
    }
}

/// The layout of an event class the skimming loop passes over by its sizes and one
/// search for a NUL: `prefix` bytes, a NUL-terminated string, then `suffix` bytes
/// (from the end of the header, every field aligned to at most a byte). Kernel classes
/// such as `irq_handler_entry` (`irq`, then the handler's `name`) have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringSkim {
    /// Bytes before the string.
    pub prefix: u16,
    /// Bytes after the string's NUL.
    pub suffix: u16,
}

impl StringSkim {
    /// The layout of event class `ev`, if it has this form.
    pub(super) fn of(ev: &EventPlan) -> Option<StringSkim> {
        let (mut sizes, mut strings) = ([0u64; 2], 0usize);
        for (step, skim) in ev.steps.iter().zip(&ev.skim) {
            let ops: &[SkimOp] = match step {
                ScopeStep::Absent => &[],
                ScopeStep::Skip { align, bits } => &[SkimOp::Fixed { align: *align, bits: *bits }],
                ScopeStep::Decode(_) => skim.as_deref()?,
            };
            for op in ops {
                match *op {
                    SkimOp::Fixed { align, bits } if align <= 8 && bits % 8 == 0 => sizes[strings.min(1)] += bits / 8,
                    SkimOp::CStr => strings += 1,
                    SkimOp::Fixed { .. } => return None,
                }
            }
        }
        let prefix = u16::try_from(sizes[0]).ok()?;
        let suffix = u16::try_from(sizes[1]).ok().filter(|s| *s <= 0x7fff)?;
        (strings == 1).then_some(StringSkim { prefix, suffix })
    }
}

/// The scopes of an event class passed over as one [`SkipChain`] of whole bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedSize {
    /// Alignment of the first scope present, in bits.
    pub align: u32,
    /// Bits of all the scopes (`u32::MAX`: the class has no such layout).
    pub bits: u32,
    /// Offset of each scope's start from the first one's ([`SkipChain::starts`]).
    pub starts: [u32; 3],
}

impl FixedSize {
    /// Not a fixed-size class.
    pub const NONE: FixedSize = FixedSize { align: 1, bits: u32::MAX, starts: [0; 3] };

    /// The fixed size of an event class with chain `chain`.
    pub(super) fn of(chain: Option<&SkipChain>) -> FixedSize {
        match chain {
            Some(c) if c.bits % 8 == 0 && c.bits < u32::MAX as u64 && c.align.is_power_of_two() => {
                FixedSize { align: c.align, bits: c.bits as u32, starts: c.starts.map(|s| s as u32) }
            }
            _ => FixedSize::NONE,
        }
    }

    /// Whether the class has a fixed size.
    #[inline(always)]
    pub fn is_fixed(&self) -> bool {
        self.bits != u32::MAX
    }
}

impl Plan {
    /// The [`SkimOp`]s passing over node `root`, when it holds only plain fixed-size
    /// fields (no role, clock or reference: see `skippable`) and byte strings.
    pub(super) fn skim_ops(&self, root: NodeId) -> Option<Box<[SkimOp]>> {
        self.ops_of(root, |id, node| {
            let i = id.0 as usize;
            Some(match *node {
                _ if self.skippable[i] => OpAt::Leaf(SkimOp::Fixed { align: node_align(node), bits: self.fixed_size[i]? }),
                Node::Str { unit: 1, .. } => OpAt::Leaf(SkimOp::CStr),
                Node::Struct { .. } => OpAt::Members(SkimOp::Fixed { align: node_align(node), bits: 0 }),
                _ => return None,
            })
        })
    }

    /// The [`FlatOp`]s decoding node `root`, when it holds only structures, integers
    /// without a role or clock, and byte strings.
    pub(super) fn flat_ops(&self, root: NodeId) -> Option<Box<[FlatOp]>> {
        self.ops_of(root, |id, node| {
            Some(match *node {
                Node::Int { align, bits, signed, be, role: None, clock: false, .. } => OpAt::Leaf(FlatOp::Int { node: id, align, bits, signed, be }),
                Node::Str { unit: 1, .. } => OpAt::Leaf(FlatOp::CStr(id)),
                Node::Struct { .. } => OpAt::Members(FlatOp::Align(node_align(node))),
                _ => return None,
            })
        })
    }

    /// Node `root` as a list of steps, in field order: `at` gives each node's step, a
    /// structure's followed by its members' (`None` for a node it does not take: then
    /// the whole list is `None`).
    fn ops_of<T>(&self, root: NodeId, at: impl Fn(NodeId, &Node) -> Option<OpAt<T>>) -> Option<Box<[T]>> {
        fn walk<T>(p: &Plan, id: NodeId, at: &impl Fn(NodeId, &Node) -> Option<OpAt<T>>, out: &mut Vec<T>) -> Option<()> {
            let node = p.node(id);
            match at(id, node)? {
                OpAt::Leaf(op) => out.push(op),
                OpAt::Members(op) => {
                    let Node::Struct { first, count, .. } = *node else { return None };
                    out.push(op);
                    for m in p.struct_members(first, count) {
                        walk(p, m.node, at, out)?;
                    }
                }
            }
            Some(())
        }
        let mut out = Vec::new();
        walk(self, root, &at, &mut out)?;
        Some(out.into_boxed_slice())
    }

    pub(super) fn scope_step(&self, root: Option<NodeId>) -> ScopeStep {
        match root {
            None => ScopeStep::Absent,
            Some(r) if self.skippable[r.0 as usize] => ScopeStep::Skip { align: node_align(self.node(r)), bits: self.fixed_size[r.0 as usize].unwrap_or(0) },
            Some(r) => ScopeStep::Decode(r),
        }
    }

    /// Fills `fixed_size` and `skippable`. Children always precede their parent in the
    /// arena, so one pass in order sees every child first.
    pub(super) fn compute_layouts(&mut self) {
        let n = self.nodes.len();
        let mut referenced = vec![false; n];
        for node in &self.nodes {
            match *node {
                Node::Seq { len, .. } => referenced[len.0 as usize] = true,
                Node::Variant { tag, .. } => referenced[tag.0 as usize] = true,
                Node::Optional { selector, .. } => referenced[selector.0 as usize] = true,
                _ => {}
            }
        }
        self.fixed_size = vec![None; n];
        self.skippable = vec![false; n];
        #[allow(clippy::needless_range_loop)] // children are read through earlier indexes
        for i in 0..n {
            let (size, plain) = match self.nodes[i] {
                Node::Int { bits, role, clock, .. } => (Some(bits as u64), role.is_none() && !clock),
                Node::Float { bits, .. } => (Some(bits as u64), true),
                Node::Str { .. } | Node::Seq { .. } | Node::Variant { .. } | Node::VarInt { .. } | Node::Optional { .. } => (None, false),
                Node::Array { elem, len, .. } => {
                    let e = elem.0 as usize;
                    let stride = self.fixed_size[e].map(|sz| align_up(sz, node_align(&self.nodes[e]) as u64));
                    let size = match (stride, self.fixed_size[e]) {
                        (_, _) if len == 0 => Some(0),
                        (Some(st), Some(sz)) => st.checked_mul(len - 1).and_then(|x| x.checked_add(sz)),
                        _ => None,
                    };
                    (size, self.skippable[e])
                }
                Node::Struct { first, count, .. } => {
                    let mut off = Some(0u64);
                    let mut plain = true;
                    for m in &self.members[first as usize..(first + count) as usize] {
                        let c = m.node.0 as usize;
                        plain &= self.skippable[c];
                        off = match (off, self.fixed_size[c]) {
                            (Some(o), Some(sz)) => Some(align_up(o, node_align(&self.nodes[c]) as u64) + sz),
                            _ => None,
                        };
                    }
                    (off, plain)
                }
            };
            self.fixed_size[i] = size;
            self.skippable[i] = size.is_some() && plain && !referenced[i];
        }
    }

    /// Bit offset of the node at `path` below a fixed-layout `root`, relative to the
    /// root's aligned start (arrays: their last element, like slots hold).
    pub(super) fn fixed_offset(&self, root: NodeId, path: &[&str]) -> Option<u64> {
        let mut cur = root;
        let mut off = 0u64;
        for name in path {
            loop {
                match *self.node(cur) {
                    Node::Array { elem, len, .. } if len > 0 => {
                        let stride = align_up(self.fixed_size[elem.0 as usize]?, node_align(self.node(elem)) as u64);
                        off = align_up(off, node_align(self.node(cur)) as u64) + stride * (len - 1);
                        cur = elem;
                    }
                    Node::Array { .. } => return None,
                    _ => break,
                }
            }
            let Node::Struct { first, count, .. } = *self.node(cur) else { return None };
            off = align_up(off, node_align(self.node(cur)) as u64);
            let mut found = None;
            for m in self.struct_members(first, count) {
                off = align_up(off, node_align(self.node(m.node)) as u64);
                if &*m.name == *name {
                    found = Some(m.node);
                    break;
                }
                off += self.fixed_size[m.node.0 as usize]?;
            }
            cur = found?;
        }
        Some(align_up(off, node_align(self.node(cur)) as u64))
    }
}
