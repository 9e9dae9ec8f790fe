//! Pieces shared by the latency analyses ([`crate::syscall`]): exact, mergeable
//! duration statistics, a bounded list of the longest occurrences, and Linux errno
//! names.
//!
//! Everything here is a monoid over integers: sums are exact (`u128` sums of squares),
//! so the standard deviation computed at the end is the same bits for every chunking.

use std::ops::ControlFlow;

use serde::Serialize;

/// Count, total, min, max and sum of squares of durations (ns): exact and mergeable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Durations {
    /// Occurrences.
    pub count: u64,
    /// Sum of durations.
    pub total: u64,
    /// Smallest duration (`u64::MAX` while none).
    pub min: u64,
    /// Largest duration.
    pub max: u64,
    /// Sum of squared durations.
    pub sumsq: u128,
}

impl Default for Durations {
    fn default() -> Self {
        Durations { count: 0, total: 0, min: u64::MAX, max: 0, sumsq: 0 }
    }
}

impl Durations {
    /// Adds one duration.
    #[inline]
    pub fn add(&mut self, d: u64) {
        self.count += 1;
        self.total += d;
        self.min = self.min.min(d);
        self.max = self.max.max(d);
        self.sumsq += u128::from(d) * u128::from(d);
    }
    /// Adds every duration of `o`.
    pub fn merge(&mut self, o: &Durations) {
        self.count += o.count;
        self.total += o.total;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sumsq += o.sumsq;
    }
    /// Mean, ns (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total as f64 / self.count as f64
        }
    }
    /// Sample standard deviation (n − 1), ns, from the exact sums; `None` under two
    /// occurrences. (lttng-analyses prints it only above two.)
    pub fn stdev(&self) -> Option<f64> {
        if self.count < 2 {
            return None;
        }
        let n = u128::from(self.count);
        let s = u128::from(self.total);
        // n·Σd² − (Σd)² ≥ 0 exactly (Cauchy–Schwarz), computed without rounding.
        let num = (n * self.sumsq).saturating_sub(s * s);
        Some((num as f64 / (n * (n - 1)) as f64).sqrt())
    }
    /// The summary row of these durations.
    pub fn row(&self) -> DurationRow {
        DurationRow {
            count: self.count,
            max_ns: self.max,
            mean_ns: self.mean(),
            min_ns: if self.count == 0 { 0 } else { self.min },
            stdev_ns: self.stdev(),
            total_ns: self.total,
        }
    }
}

/// Duration statistics as reported.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DurationRow {
    /// Occurrences.
    pub count: u64,
    /// Longest, ns.
    pub max_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Shortest, ns.
    pub min_ns: u64,
    /// Sample standard deviation, ns (absent under two occurrences).
    pub stdev_ns: Option<f64>,
    /// Sum, ns.
    pub total_ns: u64,
}

/// The `n` largest items of a chunk under `Ord` (largest first): merging two lists
/// keeps the `n` largest of their union, so the result does not depend on chunking
/// when the order is total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Top<T> {
    /// (`Default`: keeps none.)
    n: usize,
    items: Vec<T>,
}

impl<T> Default for Top<T> {
    fn default() -> Self {
        Top { n: 0, items: Vec::new() }
    }
}

impl<T: Ord> Top<T> {
    /// An empty list keeping at most `n`.
    pub fn new(n: usize) -> Top<T> {
        Top { n, items: Vec::new() }
    }
    /// Offers one item.
    #[inline]
    pub fn offer(&mut self, x: T) {
        if self.n == 0 || (self.items.len() == self.n && self.items.last().is_some_and(|l| *l >= x)) {
            return;
        }
        let at = self.items.partition_point(|y| *y > x);
        self.items.insert(at, x);
        self.items.truncate(self.n);
    }
    /// Offers every item of `o`.
    pub fn merge(&mut self, o: Top<T>) {
        for x in o.items {
            self.offer(x);
        }
    }
    /// The items, largest first.
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
    /// Changes every item in place (the order must not change).
    pub fn map_in_place(&mut self, f: impl FnMut(&mut T)) {
        self.items.iter_mut().for_each(f);
    }
    /// The items, largest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.items.iter()
    }
}

/// Linux (asm-generic) errno names, by number (index 0 unused).
const ERRNO: [&str; 134] = [
    "",
    "EPERM",
    "ENOENT",
    "ESRCH",
    "EINTR",
    "EIO",
    "ENXIO",
    "E2BIG",
    "ENOEXEC",
    "EBADF",
    "ECHILD",
    "EAGAIN",
    "ENOMEM",
    "EACCES",
    "EFAULT",
    "ENOTBLK",
    "EBUSY",
    "EEXIST",
    "EXDEV",
    "ENODEV",
    "ENOTDIR",
    "EISDIR",
    "EINVAL",
    "ENFILE",
    "EMFILE",
    "ENOTTY",
    "ETXTBSY",
    "EFBIG",
    "ENOSPC",
    "ESPIPE",
    "EROFS",
    "EMLINK",
    "EPIPE",
    "EDOM",
    "ERANGE",
    "EDEADLK",
    "ENAMETOOLONG",
    "ENOLCK",
    "ENOSYS",
    "ENOTEMPTY",
    "ELOOP",
    "",
    "ENOMSG",
    "EIDRM",
    "ECHRNG",
    "EL2NSYNC",
    "EL3HLT",
    "EL3RST",
    "ELNRNG",
    "EUNATCH",
    "ENOCSI",
    "EL2HLT",
    "EBADE",
    "EBADR",
    "EXFULL",
    "ENOANO",
    "EBADRQC",
    "EBADSLT",
    "",
    "EBFONT",
    "ENOSTR",
    "ENODATA",
    "ETIME",
    "ENOSR",
    "ENONET",
    "ENOPKG",
    "EREMOTE",
    "ENOLINK",
    "EADV",
    "ESRMNT",
    "ECOMM",
    "EPROTO",
    "EMULTIHOP",
    "EDOTDOT",
    "EBADMSG",
    "EOVERFLOW",
    "ENOTUNIQ",
    "EBADFD",
    "EREMCHG",
    "ELIBACC",
    "ELIBBAD",
    "ELIBSCN",
    "ELIBMAX",
    "ELIBEXEC",
    "EILSEQ",
    "ERESTART",
    "ESTRPIPE",
    "EUSERS",
    "ENOTSOCK",
    "EDESTADDRREQ",
    "EMSGSIZE",
    "EPROTOTYPE",
    "ENOPROTOOPT",
    "EPROTONOSUPPORT",
    "ESOCKTNOSUPPORT",
    "EOPNOTSUPP",
    "EPFNOSUPPORT",
    "EAFNOSUPPORT",
    "EADDRINUSE",
    "EADDRNOTAVAIL",
    "ENETDOWN",
    "ENETUNREACH",
    "ENETRESET",
    "ECONNABORTED",
    "ECONNRESET",
    "ENOBUFS",
    "EISCONN",
    "ENOTCONN",
    "ESHUTDOWN",
    "ETOOMANYREFS",
    "ETIMEDOUT",
    "ECONNREFUSED",
    "EHOSTDOWN",
    "EHOSTUNREACH",
    "EALREADY",
    "EINPROGRESS",
    "ESTALE",
    "EUCLEAN",
    "ENOTNAM",
    "ENAVAIL",
    "EISNAM",
    "EREMOTEIO",
    "EDQUOT",
    "ENOMEDIUM",
    "EMEDIUMTYPE",
    "ECANCELED",
    "ENOKEY",
    "EKEYEXPIRED",
    "EKEYREVOKED",
    "EKEYREJECTED",
    "EOWNERDEAD",
    "ENOTRECOVERABLE",
    "ERFKILL",
    "EHWPOISON",
];

/// How a syscall's return value is tallied: `success` when ≥ 0, else the errno name
/// of `-ret` (as Python's `errno.errorcode` names it), else the number.
pub fn return_key(ret: i64) -> String {
    if ret >= 0 {
        return "success".into();
    }
    match ret.checked_neg().and_then(|e| usize::try_from(e).ok()).and_then(|e| ERRNO.get(e)) {
        Some(n) if !n.is_empty() => (*n).into(),
        _ => ret.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_merge_is_adding() {
        let (mut a, mut b, mut all) = (Durations::default(), Durations::default(), Durations::default());
        for (i, d) in [5u64, 1, 9, 3, 3, 7].into_iter().enumerate() {
            all.add(d);
            if i < 2 { &mut a } else { &mut b }.add(d);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let r = all.row();
        assert_eq!((r.count, r.min_ns, r.max_ns, r.total_ns), (6, 1, 9, 28));
        // Sample stdev of 5 1 9 3 3 7: Σd² = 174, Σ(d−m)² = 174 − 28²/6 = 130/3, /5 → 26/3.
        assert!((r.stdev_ns.unwrap() - (26.0f64 / 3.0).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn top_keeps_the_largest_whatever_the_split() {
        let xs = [4, 9, 1, 9, 7, 3, 8];
        let mut one = Top::new(3);
        xs.iter().for_each(|x| one.offer(*x));
        let (mut a, mut b) = (Top::new(3), Top::new(3));
        xs[..4].iter().for_each(|x| a.offer(*x));
        xs[4..].iter().for_each(|x| b.offer(*x));
        a.merge(b);
        assert_eq!(a.into_vec(), vec![9, 9, 8]);
        assert_eq!(one.into_vec(), vec![9, 9, 8]);
    }

    #[test]
    fn histograms_hold_every_duration_in_range() {
        let d = [1u64, 20, 300, 1000, 1000, 5];
        let log = histogram(&d, &FreqOptions { buckets: 3, min: None, max: None, linear: false });
        assert_eq!(log.iter().map(|b| b.count).collect::<Vec<_>>(), vec![2, 1, 3]);
        assert_eq!((log[0].lo_ns, log[2].hi_ns), (1.0, 1000.0));
        let lin = histogram(&d, &FreqOptions { buckets: 2, min: Some(0), max: Some(400), linear: true });
        assert_eq!(lin.iter().map(|b| b.count).collect::<Vec<_>>(), vec![3, 1]);
    }

    #[test]
    fn errno_names() {
        assert_eq!(return_key(0), "success");
        assert_eq!(return_key(-2), "ENOENT");
        assert_eq!(return_key(-11), "EAGAIN");
        assert_eq!(return_key(-133), "EHWPOISON");
        assert_eq!(return_key(-41), "-41");
        assert_eq!(return_key(-9999), "-9999");
    }
}

/// Where a latency analysis puts each occurrence: the longest ([`Top`]) and, when
/// asked (`--log`, `--freq`), every one. Merging concatenates; the report sorts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sink<T> {
    /// The longest.
    pub top: Top<T>,
    /// Every occurrence, when kept.
    pub all: Option<Vec<T>>,
}

impl<T> Default for Sink<T> {
    fn default() -> Self {
        Sink { top: Top::default(), all: None }
    }
}

impl<T: Ord + Copy> Sink<T> {
    /// An empty sink keeping the `o.top` longest, and all when `o.keep_all`.
    pub fn new(o: &LatencyOptions) -> Sink<T> {
        Sink { top: Top::new(o.top), all: o.keep_all.then(Vec::new) }
    }
    /// One occurrence.
    #[inline]
    pub fn offer(&mut self, x: T) {
        if let Some(a) = &mut self.all {
            a.push(x);
        }
        self.top.offer(x);
    }
    /// Adds every occurrence of `o` (a later chunk's).
    pub fn merge(&mut self, o: Sink<T>) {
        if let (Some(a), Some(b)) = (&mut self.all, o.all) {
            a.extend(b);
        }
        self.top.merge(o.top);
    }
    /// Changes every occurrence in place (the order of the longest must not change).
    pub fn map_in_place(&mut self, mut f: impl FnMut(&mut T)) {
        if let Some(a) = &mut self.all {
            a.iter_mut().for_each(&mut f);
        }
        self.top.map_in_place(f);
    }
    /// Keeps only the occurrences `keep` selects, the longest chosen again among them:
    /// exact when every occurrence was kept ([`LatencyOptions::keep_all`], which a thread
    /// filter sets), else among the longest only.
    pub fn retain(&mut self, keep: impl Fn(&T) -> bool) {
        let Some(all) = &mut self.all else {
            self.top.items.retain(|x| keep(x));
            return;
        };
        all.retain(|x| keep(x));
        let mut top = Top::new(self.top.n);
        for x in all.iter() {
            top.offer(*x);
        }
        self.top = top;
    }

    /// Takes every occurrence kept so far out of the sink (none when not kept); the
    /// longest stay.
    pub fn drain_all(&mut self) -> Vec<T> {
        self.all.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Takes the occurrences kept so far that `take` selects out of the sink (none
    /// when not kept), the others staying in their order; the longest stay.
    pub fn drain_where(&mut self, take: impl Fn(&T) -> bool) -> Vec<T> {
        let Some(all) = &mut self.all else { return Vec::new() };
        let (taken, kept) = std::mem::take(all).into_iter().partition(|x| take(x));
        *all = kept;
        taken
    }

    /// The longest, and every occurrence sorted by `key` (empty when not kept).
    pub fn finish<K: Ord>(self, key: impl Fn(&T) -> K) -> (Vec<T>, Vec<T>) {
        let mut all = self.all.unwrap_or_default();
        all.sort_by_key(key);
        (self.top.into_vec(), all)
    }
}

/// Hands `out` the rows (`row` of each) of `occurrences` taken out of a running state,
/// sorted by `key` (the report log's order), in pieces of at most `piece` rows; stops
/// at `out`'s `Break`. What the latency analyses' drains do with what they take
/// ([`crate::occurrences`]).
pub(crate) fn hand_over<T, K: Ord, R>(
    mut occurrences: Vec<T>,
    key: impl Fn(&T) -> K,
    piece: usize,
    row: impl Fn(&T) -> R,
    out: &mut dyn FnMut(Vec<R>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    occurrences.sort_by_key(key);
    for part in occurrences.chunks(piece.max(1)) {
        out(part.iter().map(&row).collect())?;
    }
    ControlFlow::Continue(())
}

/// The options every latency analysis takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencyOptions {
    /// How many of the longest occurrences to list.
    pub top: usize,
    /// Only occurrences at least this long (ns).
    pub min_duration: u64,
    /// Only occurrences at most this long (ns).
    pub max_duration: u64,
    /// Keep every occurrence (for `--log` and `--freq`).
    pub keep_all: bool,
}

impl Default for LatencyOptions {
    fn default() -> Self {
        LatencyOptions { top: 10, min_duration: 0, max_duration: u64::MAX, keep_all: false }
    }
}

impl LatencyOptions {
    /// Whether a duration passes the `--min-duration`/`--max-duration` filter.
    #[inline]
    pub fn keeps(&self, d: u64) -> bool {
        d >= self.min_duration && d <= self.max_duration
    }
}

/// How `--freq` cuts durations into buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreqOptions {
    /// Number of buckets (`--freq-resolution`).
    pub buckets: usize,
    /// Lowest bound (default: the shortest occurrence).
    pub min: Option<u64>,
    /// Highest bound (default: the longest occurrence).
    pub max: Option<u64>,
    /// Equal widths (else log-spaced: equal ratios, the default).
    pub linear: bool,
}

/// One bucket of a latency histogram: occurrences with `lo_ns <= d < hi_ns` (the last
/// bucket also holds `d == hi_ns`).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    /// Occurrences.
    pub count: u64,
    /// Upper bound, ns.
    pub hi_ns: f64,
    /// Lower bound, ns.
    pub lo_ns: f64,
}

/// The histogram of `durations` (exact: computed from every occurrence at the end).
pub fn histogram(durations: &[u64], o: &FreqOptions) -> Vec<Bucket> {
    let n = o.buckets.max(1);
    let lo = o.min.or_else(|| durations.iter().copied().min()).unwrap_or(0);
    let hi = o.max.or_else(|| durations.iter().copied().max()).unwrap_or(0).max(lo);
    // Log spacing needs a positive lower bound.
    let (flo, fhi) = if o.linear { (lo as f64, hi as f64) } else { ((lo.max(1)) as f64, (hi.max(lo.max(1))) as f64) };
    let edge = |i: usize| {
        let f = i as f64 / n as f64;
        if o.linear {
            flo + (fhi - flo) * f
        } else {
            flo * (fhi / flo).powf(f)
        }
    };
    let mut b: Vec<Bucket> = (0..n).map(|i| Bucket { count: 0, hi_ns: edge(i + 1), lo_ns: edge(i) }).collect();
    for &d in durations {
        if d < lo || d > hi {
            continue;
        }
        let x = d as f64;
        let pos = if fhi <= flo {
            0.0
        } else if o.linear {
            (x - flo) / (fhi - flo)
        } else {
            (x.max(flo) / flo).ln() / (fhi / flo).ln()
        };
        let i = ((pos * n as f64) as usize).min(n - 1);
        b[i].count += 1;
    }
    b
}
