//! The hierarchy against a model (DESIGN.md §7–§8). A property test draws a sequence of steps —
//! create an array or a group (explicit or implicit parents), erase (or erase keeping the parent),
//! move, resize, append, region write — and runs it on a MemoryStore and on the auto-commit store
//! of a redb and of an LMDB database; on the databases some steps are grouped in an explicit
//! transaction that commits or aborts. A plain model (explicit nodes by path; implicit groups are
//! the ancestors of explicit nodes that are not explicit themselves; arrays as dense `Vec<i32>`)
//! mirrors every step, and must agree with zarrdb on success or on the kind of error
//! (AlreadyExists, ParentIsArray, NotFound, InvalidMove, WrongKind, RankMismatch, AppendShape,
//! OutOfBounds).
//!
//! After every step the hierarchy read back from `/` (`common/hierarchy_walk.rs`, which also checks
//! that nothing lives under an array, no chunk lies outside a grid, stored chunks are exactly the
//! non-fill ones and implicit groups have children) must equal the model: the same nodes, implicit
//! groups marked implicit, every array's shape, chunk shape, fill value and content. Inside a
//! transaction its own store must show the transaction's state after every step, and the
//! database's store the state before it.
//!
//! Names come from `x`, `y`, `z`: `c` is left out, since under the default chunk key encoding
//! `/array/c` is the folder of the array's chunks (see `tests/hierarchy_chunk_folder.rs`).

#[path = "common/hierarchy_walk.rs"]
mod hierarchy_walk;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "this test draws no signed numbers")]
mod splitmix;

use std::collections::BTreeMap;
use std::sync::Arc;

use hierarchy_walk::{walk, Seen};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use splitmix::SplitMix;
use zarrdb::error::{ArrayError, NodeError};
use zarrdb::hierarchy::Parents;
use zarrdb::{
    Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, FillValue, Group, MemoryStore, Node, Store,
};

/// `c` is also the chunk folder of arrays with the default key encoding: a path through it must
/// never be taken for a node.
const NAMES: [&str; 4] = ["x", "y", "z", "c"];
/// Longest array dimension; chunks are 2 to 5 long.
const MAX_LEN: u64 = 10;

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// An explicit node of the model.
#[derive(Clone, Debug)]
enum Explicit {
    Group,
    Array { shape: Vec<u64>, chunks: Vec<u64>, fill: i32, data: Vec<i32> },
}

/// The explicit nodes by path; every other existing node is an implicit group.
#[derive(Clone, Debug, Default)]
struct Model(BTreeMap<String, Explicit>);

/// What a step came to: success or the kind of error.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    AlreadyExists,
    ParentIsArray,
    NotFound,
    InvalidMove,
    WrongKind,
    RankMismatch,
    AppendShape,
    OutOfBounds,
    Other(String),
}

fn outcome(result: Result<(), Error>) -> Outcome {
    match result {
        Ok(()) => Outcome::Ok,
        Err(Error::Node(NodeError::AlreadyExists { .. })) => Outcome::AlreadyExists,
        Err(Error::Node(NodeError::ParentIsArray { .. })) => Outcome::ParentIsArray,
        Err(Error::Node(NodeError::NotFound { .. })) => Outcome::NotFound,
        Err(Error::Node(NodeError::InvalidMove { .. })) => Outcome::InvalidMove,
        Err(Error::Node(NodeError::WrongKind { .. })) => Outcome::WrongKind,
        Err(Error::Array(ArrayError::RankMismatch { .. })) => Outcome::RankMismatch,
        Err(Error::Array(ArrayError::AppendShape { .. })) => Outcome::AppendShape,
        Err(Error::Array(ArrayError::OutOfBounds { .. })) => Outcome::OutOfBounds,
        Err(e) => Outcome::Other(e.to_string()),
    }
}

fn parent(path: &str) -> Option<String> {
    let cut = path.rfind('/').filter(|_| path != "/")?;
    Some(if cut == 0 { "/".into() } else { path[..cut].into() })
}

/// Proper ancestors, root first.
fn ancestors(path: &str) -> Vec<String> {
    let mut out: Vec<String> = std::iter::successors(parent(path), |p| parent(p)).collect();
    out.reverse();
    out
}

/// Whether `path` lies strictly below `top`.
fn below(path: &str, top: &str) -> bool {
    if top == "/" {
        path != "/"
    } else {
        path.strip_prefix(top).is_some_and(|rest| rest.starts_with('/'))
    }
}

/// Every element coordinate of a box, C order.
fn cells(shape: &[u64]) -> Vec<Vec<u64>> {
    shape.iter().fold(vec![vec![]], |acc, &n| {
        acc.into_iter().flat_map(|c| (0..n).map(move |i| [c.clone(), vec![i]].concat())).collect()
    })
}

fn flat(shape: &[u64], coord: &[u64]) -> usize {
    coord.iter().zip(shape).fold(0, |f, (&c, &n)| f * n as usize + c as usize)
}

impl Model {
    fn has_descendants(&self, path: &str) -> bool {
        self.0.keys().any(|p| below(p, path))
    }

    fn exists(&self, path: &str) -> bool {
        self.0.contains_key(path) || self.has_descendants(path)
    }

    fn array_ancestor(&self, path: &str) -> bool {
        ancestors(path).iter().any(|a| matches!(self.0.get(a), Some(Explicit::Array { .. })))
    }

    fn make_parents_explicit(&mut self, path: &str) {
        for a in ancestors(path) {
            self.0.entry(a).or_insert(Explicit::Group);
        }
    }

    /// Every existing node (explicit, then implicit ancestors), sorted.
    fn nodes(&self) -> Vec<String> {
        let mut all: Vec<String> = self.0.keys().flat_map(|p| ancestors(p).into_iter().chain([p.clone()])).collect();
        all.sort();
        all.dedup();
        all
    }

    fn arrays(&self) -> Vec<String> {
        self.0.iter().filter(|(_, n)| matches!(n, Explicit::Array { .. })).map(|(p, _)| p.clone()).collect()
    }

    /// What the walk must find.
    fn expected(&self) -> BTreeMap<String, Seen> {
        self.nodes()
            .into_iter()
            .map(|p| {
                let seen = match self.0.get(&p) {
                    None => Seen::Group { implicit: true },
                    Some(Explicit::Group) => Seen::Group { implicit: false },
                    Some(Explicit::Array { shape, chunks, fill, data }) => {
                        Seen::Array { shape: shape.clone(), chunks: chunks.clone(), fill: *fill, data: data.clone() }
                    }
                };
                (p, seen)
            })
            .collect()
    }

    /// The array at `path`, as `Array::open` finds it.
    fn array(&mut self, path: &str) -> Result<(&mut Vec<u64>, i32, &mut Vec<i32>), Outcome> {
        if !self.0.contains_key(path) && self.exists(path) {
            return Err(Outcome::WrongKind);
        }
        match self.0.get_mut(path) {
            None => Err(Outcome::NotFound),
            Some(Explicit::Group) => Err(Outcome::WrongKind),
            Some(Explicit::Array { shape, fill, data, .. }) => Ok((shape, *fill, data)),
        }
    }

    /// Apply an action; on an error nothing changes.
    fn apply(&mut self, action: &Action) -> Outcome {
        match self.try_apply(action) {
            Ok(()) => Outcome::Ok,
            Err(o) => o,
        }
    }

    fn try_apply(&mut self, action: &Action) -> Result<(), Outcome> {
        match action {
            Action::CreateArray { path, parents, shape, chunks, fill } => {
                if self.exists(path) {
                    return Err(Outcome::AlreadyExists);
                }
                self.create(path, *parents)?;
                let data = vec![*fill; cells(shape).len()];
                self.0.insert(
                    path.clone(),
                    Explicit::Array { shape: shape.clone(), chunks: chunks.clone(), fill: *fill, data },
                );
            }
            Action::CreateGroup { path, parents } => {
                if self.0.contains_key(path) {
                    return Err(Outcome::AlreadyExists);
                }
                self.create(path, *parents)?;
                self.0.insert(path.clone(), Explicit::Group);
            }
            Action::Erase { path, keep_parent } => {
                if !self.exists(path) {
                    return Err(Outcome::NotFound);
                }
                if let Some(p) = parent(path).filter(|_| *keep_parent) {
                    self.0.entry(p).or_insert(Explicit::Group);
                }
                self.0.retain(|p, _| p != path && !below(p, path));
            }
            Action::Rename { from, to } => {
                if from == "/" || to == "/" || to == from || below(to, from) {
                    return Err(Outcome::InvalidMove);
                }
                if !self.exists(from) {
                    return Err(Outcome::NotFound);
                }
                if self.exists(to) {
                    return Err(Outcome::AlreadyExists);
                }
                self.create(to, Parents::Explicit)?;
                let moved: Vec<String> = self.0.keys().filter(|p| *p == from || below(p, from)).cloned().collect();
                for p in moved {
                    let node = self.0.remove(&p).expect("listed");
                    self.0.insert(format!("{to}{}", &p[from.len()..]), node);
                }
            }
            Action::Resize { path, shape } => {
                let (old, fill, data) = self.array(path)?;
                if shape.len() != old.len() {
                    return Err(Outcome::RankMismatch);
                }
                *data = resized(old, data, shape, fill);
                *old = shape.clone();
            }
            Action::Append { path, axis, block, values } => {
                let (old, fill, data) = self.array(path)?;
                let rank = old.len();
                if block.len() != rank || *axis >= rank || (0..rank).any(|d| d != *axis && block[d] != old[d]) {
                    return Err(Outcome::AppendShape);
                }
                let mut shape = old.clone();
                shape[*axis] += block[*axis];
                let mut offset = vec![0; rank];
                offset[*axis] = old[*axis];
                *data = resized(old, data, &shape, fill);
                write(&shape, data, &offset, block, values);
                *old = shape;
            }
            Action::Write { path, offset, shape, values } => {
                let (old, _, data) = self.array(path)?;
                if offset.len() != old.len() {
                    return Err(Outcome::RankMismatch);
                }
                if (0..old.len()).any(|d| offset[d] + shape[d] > old[d]) {
                    return Err(Outcome::OutOfBounds);
                }
                write(old, data, offset, shape, values);
            }
        }
        Ok(())
    }

    /// The checks and parent groups every creation shares (the node's own path already checked).
    fn create(&mut self, path: &str, parents: Parents) -> Result<(), Outcome> {
        if self.array_ancestor(path) {
            return Err(Outcome::ParentIsArray);
        }
        if parents == Parents::Explicit {
            self.make_parents_explicit(path);
        }
        Ok(())
    }
}

/// The content after a resize: what lies inside both shapes stays, the rest is fill.
fn resized(old: &[u64], data: &[i32], shape: &[u64], fill: i32) -> Vec<i32> {
    cells(shape).iter().map(|c| if c.iter().zip(old).all(|(i, n)| i < n) { data[flat(old, c)] } else { fill }).collect()
}

fn write(array_shape: &[u64], data: &mut [i32], offset: &[u64], shape: &[u64], values: &[i32]) {
    for (k, c) in cells(shape).iter().enumerate() {
        let at: Vec<u64> = c.iter().zip(offset).map(|(i, o)| i + o).collect();
        data[flat(array_shape, &at)] = values[k];
    }
}

// ---------------------------------------------------------------------------------------------
// Steps: drawn abstractly, resolved against the model into concrete actions
// ---------------------------------------------------------------------------------------------

/// A step with concrete paths and values, run on both sides.
#[derive(Clone, Debug)]
enum Action {
    CreateArray { path: String, parents: Parents, shape: Vec<u64>, chunks: Vec<u64>, fill: i32 },
    CreateGroup { path: String, parents: Parents },
    Erase { path: String, keep_parent: bool },
    Rename { from: String, to: String },
    Resize { path: String, shape: Vec<u64> },
    Append { path: String, axis: usize, block: Vec<u64>, values: Vec<i32> },
    Write { path: String, offset: Vec<u64>, shape: Vec<u64>, values: Vec<i32> },
}

/// Which node a step is about: one that exists (by index into the model's list), or any path.
#[derive(Clone, Debug)]
enum Pick {
    Existing(usize),
    Any(Vec<usize>),
}

/// A step as drawn. Numbers are resolved against the array's current shape, so most steps are
/// valid; the `bad` flags make the invalid ones on purpose.
#[derive(Clone, Debug)]
enum Op {
    CreateArray { path: Vec<usize>, implicit: bool, dims: Vec<(u64, u64)>, fill: i32 },
    CreateGroup { path: Vec<usize>, implicit: bool },
    Erase { node: Pick, keep_parent: bool },
    Rename { from: Pick, to: Vec<usize> },
    Resize { array: Pick, shape: [u64; 2], bad: bool },
    Append { array: Pick, axis: usize, len: u64, bad: bool, seed: u64 },
    Write { array: Pick, at: [(u64, u64); 2], bad: bool, seed: u64 },
}

#[derive(Clone, Debug)]
enum Step {
    Auto(Op),
    /// Explicit transaction: its operations, then commit (`true`) or abort.
    Txn(Vec<Op>, bool),
}

fn path_of(names: &[usize]) -> String {
    if names.is_empty() {
        return "/".into();
    }
    names.iter().map(|&n| format!("/{}", NAMES[n])).collect()
}

fn pick(model: &Model, pick: &Pick, arrays_only: bool) -> String {
    match pick {
        Pick::Any(names) => path_of(names),
        Pick::Existing(i) => {
            // Not the root: erasing it empties everything, and it cannot move.
            let mut list = if arrays_only { model.arrays() } else { model.nodes() };
            list.retain(|p| p != "/");
            if list.is_empty() {
                "/x".into()
            } else {
                list[i % list.len()].clone()
            }
        }
    }
}

/// Element values: one in four writes clears to the fill value, otherwise a quarter are fill.
fn values(seed: u64, n: usize, fill: i32) -> Vec<i32> {
    let mut rng = SplitMix::new(seed, 1);
    let clear = rng.range(0, 3) == 0;
    (0..n).map(|_| if clear || rng.range(0, 3) == 0 { fill } else { rng.range(0, 99) as i32 - 49 }).collect()
}

fn resolve(model: &Model, op: &Op) -> Action {
    let parents = |implicit: bool| if implicit { Parents::Implicit } else { Parents::Explicit };
    match op {
        Op::CreateArray { path, implicit, dims, fill } => Action::CreateArray {
            path: path_of(path),
            parents: parents(*implicit),
            shape: dims.iter().map(|d| d.0).collect(),
            chunks: dims.iter().map(|d| d.1).collect(),
            fill: *fill,
        },
        Op::CreateGroup { path, implicit } => Action::CreateGroup { path: path_of(path), parents: parents(*implicit) },
        Op::Erase { node, keep_parent } => Action::Erase { path: pick(model, node, false), keep_parent: *keep_parent },
        Op::Rename { from, to } => Action::Rename { from: pick(model, from, false), to: path_of(to) },
        Op::Resize { array, shape, bad } => {
            let path = pick(model, array, true);
            // Arrays are 1-d or 2-d: a bad resize has the other rank.
            let rank = current_shape(model, &path).len();
            let rank = if *bad { 3 - rank } else { rank };
            Action::Resize { path, shape: shape[..rank].to_vec() }
        }
        Op::Append { array, axis, len, bad, seed } => {
            let path = pick(model, array, true);
            let mut block = current_shape(model, &path);
            let rank = block.len();
            let mut axis = axis % rank;
            block[axis] = (*len).min(MAX_LEN.saturating_sub(block[axis]));
            if *bad {
                // The axis is out of range, another dimension differs, or the rank differs.
                match (seed % 3, rank) {
                    (0, _) => axis = rank,
                    (1, 2) => block[1 - axis] += 1,
                    _ => block.push(1),
                }
            }
            let values = values(*seed, block.iter().product::<u64>() as usize, current_fill(model, &path));
            Action::Append { path, axis, block, values }
        }
        Op::Write { array, at, bad, seed } => {
            let path = pick(model, array, true);
            let shape = current_shape(model, &path);
            let (mut offset, mut len) = (vec![], vec![]);
            for (d, &n) in shape.iter().enumerate() {
                let o = at[d].0 % (n + 1);
                offset.push(o);
                len.push(at[d].1 % (n - o + 1));
            }
            if *bad {
                // Past the end, or a region of another rank.
                if seed % 2 == 0 {
                    len[0] += 1;
                } else {
                    offset.push(0);
                    len.push(1);
                }
            }
            let values = values(*seed, len.iter().product::<u64>() as usize, current_fill(model, &path));
            Action::Write { path, offset, shape: len, values }
        }
    }
}

/// The model's shape of the array at `path`, or a 1-d stand-in when there is none (the step then
/// fails with NotFound or WrongKind on both sides).
fn current_shape(model: &Model, path: &str) -> Vec<u64> {
    match model.0.get(path) {
        Some(Explicit::Array { shape, .. }) => shape.clone(),
        _ => vec![3],
    }
}

fn current_fill(model: &Model, path: &str) -> i32 {
    match model.0.get(path) {
        Some(Explicit::Array { fill, .. }) => *fill,
        _ => 0,
    }
}

fn names() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![1 => Just(vec![]), 12 => prop::collection::vec(0..NAMES.len(), 1..=3)]
}

fn pick_strategy() -> impl Strategy<Value = Pick> {
    prop_oneof![6 => any::<usize>().prop_map(Pick::Existing), 1 => names().prop_map(Pick::Any)]
}

fn bad() -> impl Strategy<Value = bool> {
    prop::bool::weighted(0.1)
}

fn op() -> impl Strategy<Value = Op> {
    let dims = prop::collection::vec((0..=MAX_LEN, 2..=5u64), 1..=2);
    prop_oneof![
        5 => (names(), any::<bool>(), dims, prop::sample::select(vec![0, -1, 42]))
            .prop_map(|(path, implicit, dims, fill)| Op::CreateArray { path, implicit, dims, fill }),
        2 => (names(), any::<bool>()).prop_map(|(path, implicit)| Op::CreateGroup { path, implicit }),
        2 => (pick_strategy(), any::<bool>()).prop_map(|(node, keep_parent)| Op::Erase { node, keep_parent }),
        2 => (pick_strategy(), names()).prop_map(|(from, to)| Op::Rename { from, to }),
        3 => (pick_strategy(), [0..=MAX_LEN, 0..=MAX_LEN], bad())
            .prop_map(|(array, shape, bad)| Op::Resize { array, shape, bad }),
        3 => (pick_strategy(), 0..2usize, 0..=4u64, bad(), any::<u64>())
            .prop_map(|(array, axis, len, bad, seed)| Op::Append { array, axis, len, bad, seed }),
        4 => (pick_strategy(), [(0..=MAX_LEN, 0..=MAX_LEN), (0..=MAX_LEN, 0..=MAX_LEN)], bad(), any::<u64>())
            .prop_map(|(array, at, bad, seed)| Op::Write { array, at, bad, seed }),
    ]
}

fn steps(transactions: bool) -> impl Strategy<Value = Vec<Step>> {
    let txn = (prop::collection::vec(op(), 1..=4), prop::bool::weighted(0.75)).prop_map(|(ops, c)| Step::Txn(ops, c));
    let step = if transactions {
        prop_oneof![5 => op().prop_map(Step::Auto), 1 => txn].boxed()
    } else {
        op().prop_map(Step::Auto).boxed()
    };
    prop::collection::vec(step, 1..=32)
}

// ---------------------------------------------------------------------------------------------
// Running a case
// ---------------------------------------------------------------------------------------------

/// Run one action on a store.
fn run(store: &Arc<dyn Store>, action: &Action) -> Result<(), Error> {
    let s = || store.clone();
    match action {
        Action::CreateArray { path, parents, shape, chunks, fill } => {
            let mut meta = ArrayMetadata::new(DataType::Int32, shape.clone(), chunks.clone());
            meta.fill_value = FillValue::from_le_bytes(fill.to_le_bytes().to_vec());
            Array::create_with(s(), path, meta, *parents).map(drop)
        }
        Action::CreateGroup { path, parents } => Group::create_with(s(), path, Default::default(), *parents).map(drop),
        Action::Erase { path, keep_parent: false } => Node::erase(s(), path),
        Action::Erase { path, keep_parent: true } => Node::erase_keeping_parent(s(), path),
        Action::Rename { from, to } => Node::rename(s(), from, to),
        Action::Resize { path, shape } => Array::open(s(), path)?.resize(shape),
        Action::Append { path, axis, block, values } => Array::open(s(), path)?.append(*axis, block, values).map(drop),
        Action::Write { path, offset, shape, values } => Array::open(s(), path)?.write_region(offset, shape, values),
    }
}

/// The actions run so far, for failure messages.
struct Log(Vec<String>);

impl Log {
    fn fail(&self, what: String) -> TestCaseError {
        TestCaseError::fail(format!("{what}\nactions so far:\n  {}", self.0.join("\n  ")))
    }

    /// Resolve `op`, run it on the model and on `store`, compare outcomes and then the hierarchy.
    fn step(&mut self, model: &mut Model, store: &Arc<dyn Store>, op: &Op) -> Result<(), TestCaseError> {
        let action = resolve(model, op);
        let want = model.apply(&action);
        let got = outcome(run(store, &action));
        self.0.push(format!("{action:?} -> {got:?}"));
        if got != want {
            return Err(self.fail(format!("zarrdb: {got:?}, model: {want:?}")));
        }
        self.compare(store, model, "after the last action")
    }

    fn compare(&self, store: &Arc<dyn Store>, model: &Model, when: &str) -> Result<(), TestCaseError> {
        let found = walk(store).map_err(|e| self.fail(format!("{when}: {e}")))?;
        let want = model.expected();
        if found != want {
            let diff: Vec<String> = want
                .keys()
                .chain(found.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .filter(|p| found.get(*p) != want.get(*p))
                .map(|p| format!("{p}: zarrdb {:?}, model {:?}", found.get(p), want.get(p)))
                .collect();
            return Err(self.fail(format!("{when}, the hierarchy differs:\n  {}", diff.join("\n  "))));
        }
        Ok(())
    }
}

fn run_on_memory(steps: &[Step]) -> Result<(), TestCaseError> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let (mut model, mut log) = (Model::default(), Log(vec![]));
    for step in steps {
        let Step::Auto(op) = step else { unreachable!("no transactions on a MemoryStore") };
        log.step(&mut model, &store, op)?;
    }
    Ok(())
}

fn run_on_database(backend: Backend, steps: &[Step]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let path = match backend {
        // A fresh bucket database in this process's memory: the same engine as on S3.
        Backend::Bucket => {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::path::PathBuf::from(format!("zarrdb+memory://hierarchy-model-{n}"))
        }
        _ => dir.path().join("db"),
    };
    let db = Database::builder()
        .backend(backend)
        .durability(Durability::Fast)
        .create(path)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let store = db.store();
    let (mut model, mut log) = (Model::default(), Log(vec![]));
    for step in steps {
        match step {
            Step::Auto(op) => log.step(&mut model, &store, op)?,
            Step::Txn(ops, commit) => {
                log.0.push("begin_write".into());
                let txn = db.begin_write().map_err(|e| log.fail(format!("begin_write: {e}")))?;
                let mut inside = model.clone();
                for op in ops {
                    log.step(&mut inside, &txn.store(), op)?;
                }
                log.compare(&store, &model, "with the transaction open, the database's store")?;
                if *commit {
                    log.0.push("commit".into());
                    txn.commit().map_err(|e| log.fail(format!("commit: {e}")))?;
                    model = inside;
                } else {
                    log.0.push("abort".into());
                    txn.abort();
                }
                log.compare(&store, &model, "after the transaction ended")?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 2048, ..ProptestConfig::default() })]

    #[test]
    fn memory_store_matches_model(steps in steps(false)) {
        run_on_memory(&steps)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, max_shrink_iters: 1024, ..ProptestConfig::default() })]

    #[test]
    fn redb_matches_model(steps in steps(true)) {
        run_on_database(Backend::Redb, &steps)?;
    }

    #[test]
    fn lmdb_matches_model(steps in steps(true)) {
        run_on_database(Backend::Lmdb, &steps)?;
    }

    #[test]
    fn bucket_matches_model(steps in steps(true)) {
        run_on_database(Backend::Bucket, &steps)?;
    }
}
