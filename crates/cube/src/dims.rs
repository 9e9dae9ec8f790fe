//! Dimensions with hierarchies; members are created as the stream reveals them.
//!
//! A dimension has named levels, coarsest first; level 0 is always `all`. A *member*
//! is a node of the dimension's tree: the path of labels from `all` down to its
//! level (`all > web > nginx > 1042 > 1043` for a thread). A label may appear under
//! several parents (a pid under two names after an `exec`): members are paths, so
//! the tree stays a tree and every member has exactly one ancestor per level, which
//! is what makes roll-ups exact. Grouping *by a level* merges members with the same
//! label at that level.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Index of a member (tree node) inside its dimension; 0 is `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

/// One member.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Node {
    parent: u32,
    level: u8,
    label: Box<str>,
}

/// A dimension: levels and the members seen so far.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dimension {
    /// Name (`process`, `cpu`, `file`, …).
    pub name: String,
    /// Level names, coarsest first; `levels[0] == "all"`.
    pub levels: Vec<String>,
    nodes: Vec<Node>,
    #[serde(skip)]
    children: HashMap<(u32, Box<str>), u32>,
}

impl Dimension {
    /// A dimension with levels `all` then `levels` (coarsest first).
    pub fn new(name: &str, levels: &[&str]) -> Dimension {
        let mut all = vec!["all".to_string()];
        all.extend(levels.iter().map(|s| s.to_string()));
        Dimension { name: name.into(), levels: all, nodes: vec![Node { parent: 0, level: 0, label: "all".into() }], children: HashMap::new() }
    }

    /// Index of the leaf level.
    pub fn leaf_level(&self) -> u8 {
        (self.levels.len() - 1) as u8
    }

    /// The level called `name`.
    pub fn level(&self, name: &str) -> Option<u8> {
        self.levels.iter().position(|l| l == name).map(|i| i as u8)
    }

    /// The member with this path of labels below `all` (created if new); the path
    /// may stop above the leaf level.
    pub fn member(&mut self, path: &[&str]) -> NodeId {
        let mut cur = 0u32;
        for (i, l) in path.iter().enumerate().take(self.levels.len() - 1) {
            cur = match self.children.get(&(cur, Box::from(*l))) {
                Some(&c) => c,
                None => {
                    let id = self.nodes.len() as u32;
                    self.nodes.push(Node { parent: cur, level: (i + 1) as u8, label: (*l).into() });
                    self.children.insert((cur, Box::from(*l)), id);
                    id
                }
            };
        }
        NodeId(cur)
    }

    /// Rebuilds the child index after deserialization.
    pub(crate) fn reindex(&mut self) {
        self.children = self.nodes.iter().enumerate().skip(1).map(|(i, n)| ((n.parent, n.label.clone()), i as u32)).collect();
    }

    /// Checks a deserialized member tree: `all` first, each member one level below
    /// its parent, which comes before it.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let bad = |why: String| Err(format!("dimension {}: {why}", self.name));
        if self.levels.is_empty() || self.levels.len() > 64 || self.nodes.first().is_none_or(|n| n.level != 0) {
            return bad("no `all` member or bad levels".into());
        }
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            let p = n.parent as usize;
            if p >= i || usize::from(n.level) >= self.levels.len() || self.nodes[p].level + 1 != n.level {
                return bad(format!("member {i} ({:?}) has a bad parent or level", n.label));
            }
        }
        Ok(())
    }

    /// Number of members (all levels).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether only `all` exists.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// The level of a member.
    pub fn level_of(&self, n: NodeId) -> u8 {
        self.nodes[n.0 as usize].level
    }

    /// The label of a member (`all` for the root).
    pub fn label(&self, n: NodeId) -> &str {
        &self.nodes[n.0 as usize].label
    }

    /// The ancestor of `n` at `level` (`n` itself when `level` is its own or deeper).
    pub fn ancestor(&self, n: NodeId, level: u8) -> NodeId {
        let mut c = n.0;
        while self.nodes[c as usize].level > level {
            c = self.nodes[c as usize].parent;
        }
        NodeId(c)
    }

    /// The members at `level` (`all` for level 0), in creation order.
    pub fn members_at(&self, level: u8) -> Vec<NodeId> {
        (0..self.nodes.len() as u32).filter(|&i| self.nodes[i as usize].level == level).map(NodeId).collect()
    }

    /// The labels from the level below `all` down to the member (empty for `all`).
    pub fn labels(&self, n: NodeId) -> Vec<&str> {
        let mut v = Vec::new();
        let mut c = n.0;
        while c != 0 {
            v.push(&*self.nodes[c as usize].label);
            c = self.nodes[c as usize].parent;
        }
        v.reverse();
        v
    }

    /// `a > b > c` path of a member.
    pub fn path(&self, n: NodeId) -> String {
        self.labels(n).join(" > ")
    }
}

/// The built-in dimensions, in this order: machine, cpu, process, file, operation.
pub fn builtin() -> Vec<Dimension> {
    vec![
        Dimension::new("machine", &["host"]),
        Dimension::new("cpu", &["cpu"]),
        Dimension::new("process", &["group", "name", "pid", "tid"]),
        Dimension::new("file", &["d1", "d2", "d3", "path"]),
        Dimension::new("operation", &["kind", "name"]),
    ]
}

/// The `file` dimension's path for a file: its first one, two and three directory
/// components, then the full path (`/var/log/nginx/a.log` → `/var`, `/var/log`,
/// `/var/log/nginx`, the path). Shallower paths repeat their directory.
pub fn file_path_labels(p: &str) -> [String; 4] {
    let comps: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
    let dirs = comps.len().saturating_sub(1);
    let pre = |k: usize| {
        let k = k.min(dirs);
        if k == 0 {
            "/".to_string()
        } else {
            format!("/{}", comps[..k].join("/"))
        }
    };
    [pre(1), pre(2), pre(3), p.to_string()]
}

/// The `operation` kind of an event name: `syscall`, `sched`, `irq`, `statedump`,
/// else the name's first `_`-separated word.
pub fn operation_kind(name: &str) -> &str {
    if name.starts_with("syscall_") || name.starts_with("sys_") || name == "exit_syscall" {
        "syscall"
    } else if name.starts_with("lttng_statedump") {
        "statedump"
    } else {
        name.split('_').next().unwrap_or(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_ancestors() {
        let mut d = Dimension::new("process", &["group", "name", "pid", "tid"]);
        let a = d.member(&["web", "nginx", "10", "11"]);
        let b = d.member(&["web", "nginx", "10", "12"]);
        let c = d.member(&["other", "bash", "10", "11"]);
        assert_ne!(a, c);
        assert_eq!(d.ancestor(a, 3), d.ancestor(b, 3));
        assert_eq!(d.label(d.ancestor(a, 2)), "nginx");
        assert_eq!(d.path(b), "web > nginx > 10 > 12");
        assert_eq!(d.labels(b), ["web", "nginx", "10", "12"]);
        assert_eq!(d.members_at(4), [a, b, c]);
        assert_eq!(d.members_at(0), [NodeId(0)]);
        let mut e = d.clone();
        e.reindex();
        assert_eq!(e.member(&["web", "nginx", "10", "11"]), a);
        assert_eq!(file_path_labels("/var/log/a.log"), ["/var".to_string(), "/var/log".into(), "/var/log".into(), "/var/log/a.log".into()]);
        assert_eq!(operation_kind("syscall_entry_read"), "syscall");
    }
}
