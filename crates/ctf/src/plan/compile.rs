//! Compiling a trace class's IR into a [`Plan`]: nodes in an arena, field references
//! (sequence lengths, variant tags) resolved to node ids.

use crate::ir::*;

use super::{Choice, EventPlan, FixedSize, Member, Node, NodeId, Plan, PlanError, ScopeStep, SkimEntry, SkipChain, StreamPlan, StringSkim};

impl Plan {
    /// Compiles a trace class.
    pub fn compile(tc: &TraceClass) -> Result<Plan, PlanError> {
        let mut p = Plan {
            nodes: Vec::new(),
            members: Vec::new(),
            choices: Vec::new(),
            enums: Vec::new(),
            packet_header: None,
            streams: Vec::new(),
            fixed_size: Vec::new(),
            skippable: Vec::new(),
            variant_ranges: Vec::new(),
        };
        let mut roots: Vec<(Scope, NodeId)> = Vec::new();
        if let Some(h) = &tc.packet_header {
            let id = p.add(h, Scope::PacketHeader, &roots)?;
            p.packet_header = Some(id);
            roots.push((Scope::PacketHeader, id));
        }
        for sc in &tc.streams {
            let mut roots = roots.clone();
            let root = |p: &mut Plan, fc: &Option<FieldClass>, scope, roots: &mut Vec<(Scope, NodeId)>| -> Result<Option<NodeId>, PlanError> {
                let Some(fc) = fc else { return Ok(None) };
                let id = p.add(fc, scope, roots)?;
                roots.push((scope, id));
                Ok(Some(id))
            };
            let packet_context = root(&mut p, &sc.packet_context, Scope::PacketContext, &mut roots)?;
            let event_header = root(&mut p, &sc.event_header, Scope::EventHeader, &mut roots)?;
            let common_context = root(&mut p, &sc.event_common_context, Scope::EventCommonContext, &mut roots)?;
            let mut events = Vec::new();
            for ec in &sc.event_classes {
                let mut roots = roots.clone();
                let context = root(&mut p, &ec.context, Scope::EventSpecificContext, &mut roots)?;
                let payload = root(&mut p, &ec.payload, Scope::EventPayload, &mut roots)?;
                events.push(EventPlan {
                    id: ec.id,
                    name: ec.name.as_str().into(),
                    context,
                    payload,
                    steps: [ScopeStep::Absent; 3],
                    skip_all: None,
                    skim: Default::default(),
                    flat: Default::default(),
                });
            }
            let max = events.iter().map(|e| e.id).max().unwrap_or(0);
            let by_id = if max < 1 << 16 {
                let mut v = vec![u32::MAX; max as usize + 1];
                for (i, e) in events.iter().enumerate() {
                    v[e.id as usize] = i as u32;
                }
                v
            } else {
                Vec::new()
            };
            let clock = sc.default_clock.as_ref().and_then(|n| tc.clocks.iter().position(|c| &c.name == n));
            p.streams.push(StreamPlan {
                id: sc.id,
                index: p.streams.len(),
                packet_context,
                event_header,
                common_context,
                events,
                by_id,
                clock,
                fast_header: None,
                fixed: Vec::new(),
                fixed_by_id: Vec::new(),
                skim_by_id: Vec::new(),
            });
        }
        p.compute_layouts();
        for si in 0..p.streams.len() {
            let common = p.streams[si].common_context;
            for ei in 0..p.streams[si].events.len() {
                let ev = &p.streams[si].events[ei];
                let roots = [common, ev.context, ev.payload];
                let steps = roots.map(|r| p.scope_step(r));
                p.streams[si].events[ei].steps = steps;
                p.streams[si].events[ei].skip_all = SkipChain::of(&steps);
                // The scopes decoded through the interpreter: how to pass over each, and
                // how to decode it flat.
                let decoded = |k: usize| roots[k].filter(|_| matches!(steps[k], ScopeStep::Decode(_)));
                let skim = [0, 1, 2].map(|k| decoded(k).and_then(|r| p.skim_ops(r)));
                let flat = [0, 1, 2].map(|k| decoded(k).and_then(|r| p.flat_ops(r)));
                let e = &mut p.streams[si].events[ei];
                (e.skim, e.flat) = (skim, flat);
            }
            p.streams[si].fixed = p.streams[si].events.iter().map(|e| FixedSize::of(e.skip_all.as_ref())).collect();
            let sp = &p.streams[si];
            let fixed_by_id: Vec<SkimEntry> = sp
                .by_id
                .iter()
                .map(|&i| match sp.fixed.get(i as usize) {
                    Some(f) if f.is_fixed() && f.align <= 8 => SkimEntry::fixed(i, f.bits / 8).unwrap_or(SkimEntry::STOP),
                    _ => SkimEntry::STOP,
                })
                .collect();
            let skim_by_id = sp
                .by_id
                .iter()
                .zip(&fixed_by_id)
                .map(|(&i, &f)| match sp.events.get(i as usize).and_then(StringSkim::of) {
                    Some(s) if f.is_stop() => SkimEntry::string(i, s).unwrap_or(SkimEntry::STOP),
                    _ => f,
                })
                .collect();
            p.streams[si].fixed_by_id = fixed_by_id;
            p.streams[si].skim_by_id = skim_by_id;
        }
        // (`TraceSet::without_compiled_headers` turns these off again.)
        for i in 0..p.streams.len() {
            p.streams[i].fast_header = p.streams[i].event_header.and_then(|h| p.recognize_lttng_header(h));
        }
        Ok(p)
    }

    fn push(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        NodeId(self.nodes.len() as u32 - 1)
    }

    fn add(&mut self, fc: &FieldClass, scope: Scope, roots: &[(Scope, NodeId)]) -> Result<NodeId, PlanError> {
        // Paths are resolved against roots compiled so far plus the current root, whose
        // node id is not known until it is pushed; so compile, then resolve references.
        let mut refs = Vec::new();
        let id = self.add_node(fc, &mut refs)?;
        let mut all_roots = roots.to_vec();
        all_roots.push((scope, id));
        for (node, path, is_tag) in refs {
            let root = all_roots
                .iter()
                .find(|(s, _)| *s == path.scope)
                .map(|(_, r)| *r)
                .ok_or_else(|| PlanError(format!("field reference into scope {:?}, which this stream does not have", path.scope)))?;
            let names: Vec<&str> = path.path.iter().map(|s| s.as_str()).collect();
            let target = self.find(root, &names).ok_or_else(|| PlanError(format!("cannot resolve field reference `{}`", path.path.join("."))))?;
            if let Node::Optional { selector, .. } = &mut self.nodes[node.0 as usize] {
                *selector = target;
            } else if is_tag {
                self.resolve_variant(node, target)?;
            } else {
                if !matches!(self.nodes[target.0 as usize], Node::Int { signed: false, .. } | Node::VarInt { signed: false, .. }) {
                    return Err(PlanError(format!("sequence length `{}` is not an unsigned integer", path.path.join("."))));
                }
                if let Node::Seq { len, .. } = &mut self.nodes[node.0 as usize] {
                    *len = target;
                }
            }
        }
        Ok(id)
    }

    /// Sets a variant's tag and builds its choices: from the option's selector ranges
    /// (CTF 2), or from the tag's enumeration mappings, where a label selects the option
    /// of the same name (or that name with a leading `_`) (CTF 1.8).
    fn resolve_variant(&mut self, var: NodeId, tag_node: NodeId) -> Result<(), PlanError> {
        let Node::Variant { opts, nopts, .. } = self.nodes[var.0 as usize] else { unreachable!("a variant node") };
        let first = self.choices.len() as u32;
        if let Some(i) = self.variant_ranges.iter().position(|(v, _)| *v == var) {
            if !matches!(self.nodes[tag_node.0 as usize], Node::Int { .. } | Node::VarInt { .. }) {
                return Err(PlanError("variant selector is not an integer".into()));
            }
            let (_, ranges) = self.variant_ranges.swap_remove(i);
            for (k, rs) in ranges.iter().enumerate().take(nopts as usize) {
                let node = self.members[opts as usize + k].node;
                for &(lo, hi) in rs {
                    self.choices.push(Choice { lo, hi, node });
                }
            }
            let count = self.choices.len() as u32 - first;
            self.nodes[var.0 as usize] = Node::Variant { tag: tag_node, first, count, opts, nopts };
            return Ok(());
        }
        let Node::Int { enum_idx: Some(e), .. } = self.nodes[tag_node.0 as usize] else {
            return Err(PlanError("variant tag is not an enumeration".into()));
        };
        for m in &self.enums[e as usize] {
            let options = &self.members[opts as usize..(opts + nopts) as usize];
            let opt = options.iter().find(|o| *o.name == *m.label).or_else(|| options.iter().find(|o| o.name.strip_prefix('_') == Some(&m.label)));
            if let Some(o) = opt {
                self.choices.push(Choice { lo: m.lo, hi: m.hi, node: o.node });
            }
        }
        let count = self.choices.len() as u32 - first;
        self.nodes[var.0 as usize] = Node::Variant { tag: tag_node, first, count, opts, nopts };
        Ok(())
    }

    fn add_node(&mut self, fc: &FieldClass, refs: &mut Vec<(NodeId, FieldPath, bool)>) -> Result<NodeId, PlanError> {
        Ok(match fc {
            FieldClass::Int(i) => self.push(int_node(i, None)),
            FieldClass::Enum(e) => {
                self.enums.push(e.mappings.clone());
                let idx = self.enums.len() as u32 - 1;
                self.push(int_node(&e.int, Some(idx)))
            }
            FieldClass::Float(f) => self.push(Node::Float { align: f.align, bits: if f.mant_dig == 24 { 32 } else { 64 }, be: f.byte_order == ByteOrder::Big }),
            FieldClass::String(sc) => {
                let be = matches!(sc.encoding, Encoding::Utf16Be | Encoding::Utf32Be);
                self.push(Node::Str { unit: sc.encoding.unit_bytes(), be })
            }
            FieldClass::Bool(i) => {
                let mut n = int_node(i, None);
                if let Node::Int { boolean, .. } = &mut n {
                    *boolean = true;
                }
                self.push(n)
            }
            FieldClass::Optional(o) => {
                let inner = self.add_node(&o.fc, refs)?;
                let first = self.choices.len() as u32;
                for &(lo, hi) in o.ranges.iter().flatten() {
                    self.choices.push(Choice { lo, hi, node: inner });
                }
                let count = self.choices.len() as u32 - first;
                let id = self.push(Node::Optional { selector: NodeId(u32::MAX), inner, first, count });
                refs.push((id, o.selector.clone(), true));
                id
            }
            FieldClass::VarInt(v) => self.push(Node::VarInt { signed: v.signed, role: v.role }),
            FieldClass::Struct(s) => {
                let ids = s.members.iter().map(|(_, m)| self.add_node(m, refs)).collect::<Result<Vec<_>, _>>()?;
                let first = self.members.len() as u32;
                for ((name, _), node) in s.members.iter().zip(ids) {
                    self.members.push(Member { name: name.as_str().into(), node });
                }
                self.push(Node::Struct { align: fc.align(), first, count: s.members.len() as u32 })
            }
            FieldClass::Variant(v) => {
                let ids = v.options.iter().map(|(_, m)| self.add_node(m, refs)).collect::<Result<Vec<_>, _>>()?;
                let opts = self.members.len() as u32;
                for ((name, _), node) in v.options.iter().zip(ids) {
                    self.members.push(Member { name: name.as_str().into(), node });
                }
                let id = self.push(Node::Variant { tag: NodeId(u32::MAX), first: 0, count: 0, opts, nopts: v.options.len() as u32 });
                if let Some(r) = &v.selector_ranges {
                    self.variant_ranges.push((id, r.clone()));
                }
                refs.push((id, v.tag.clone(), true));
                id
            }
            FieldClass::Array(a) => {
                let elem = self.add_node(&a.elem, refs)?;
                self.push(Node::Array { align: fc.align(), elem, len: a.len, text: is_char(&a.elem) })
            }
            FieldClass::Sequence(s) => {
                let elem = self.add_node(&s.elem, refs)?;
                let id = self.push(Node::Seq { align: fc.align(), elem, len: NodeId(u32::MAX), text: is_char(&s.elem) });
                refs.push((id, s.length.clone(), false));
                id
            }
        })
    }
}

fn int_node(i: &IntClass, enum_idx: Option<u32>) -> Node {
    Node::Int {
        align: i.align,
        bits: i.size,
        signed: i.signed,
        be: i.byte_order == ByteOrder::Big,
        base: i.base,
        role: i.role,
        clock: i.mapped_clock.is_some(),
        enum_idx,
        boolean: false,
    }
}

fn is_char(fc: &FieldClass) -> bool {
    matches!(fc, FieldClass::Int(i) if i.size == 8 && i.encoding != Encoding::None)
}
