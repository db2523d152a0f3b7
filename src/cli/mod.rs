//! Command-line front end. Exit status: 0 success; 1 an answer of "no" (`diff` found
//! differences, `check` found problems or could not open the store); 2 a usage error (from
//! clap); 3 any other error, printed as one line on stderr. A panic (101) is always a bug.

/// `println!` for the commands: a closed standard output (`zarrdb tree ... | head -1`) ends the
/// command quietly (`println!` would panic), any other write failure is an error. Returns
/// [`CliResult`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` the same way.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write(format_args!($($arg)*))
    };
}

mod args;
mod attrs;
mod bench;
mod cat;
mod check;
mod compact;
mod copy;
mod create;
mod demo;
mod diff;
mod du;
mod history;
mod info;
mod locator;
mod nodes;
mod output;
mod progress;
mod region;
mod render;
mod transfer;
mod tree;
mod usage;
mod write;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// zarrdb: an embedded, transactional Zarr v3 storage engine.
#[derive(Parser)]
#[command(
    name = "zarrdb",
    version,
    about,
    after_help = "Stores: a path ending in .zip is a zip archive; an existing folder a directory store (or an LMDB or \
                  sled database it holds); any other path a redb database file. dir:, zip:, redb:, lmdb:, sled: force \
                  one. A node is a path inside the store: /, /group/array; cp and diff take STORE:/NODE.\n\n\
                  Exit status: 0 done; 1 diff found differences or check found problems; 2 usage error; 3 any \
                  other error (one line on stderr).\n\nMore: docs/cli.md"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the hierarchy: names, shapes, data types, chunk shapes, codecs, implicit groups.
    #[command(
        after_help = "Examples:\n  zarrdb tree data.zarrdb\n  zarrdb tree -l lmdb:/srv/env        # with stored and logical bytes per node"
    )]
    Tree {
        /// Store locator: a database file, an LMDB or sled folder, a directory; or `redb:`, `lmdb:`, `sled:`, `dir:` + PATH.
        store: String,
        /// Also show each node's stored and logical bytes and their ratio (a group: its subtree).
        #[arg(long, short)]
        long: bool,
        /// Print a JSON list of the nodes: path, node_type, implicit, and for arrays data_type,
        /// shape, chunk_shape, codecs (with -l also logical_bytes, stored_bytes, ratio).
        #[arg(long)]
        json: bool,
    },
    /// Show the stored and logical (uncompressed) bytes and their ratio of every node at and below
    /// NODE, a group counting everything below it.
    ///
    /// Nothing is read or decoded: sizes come from listing the keys.
    #[command(after_help = "Examples:\n  zarrdb du data.zarrdb\n  zarrdb du data.zarrdb /runs --json")]
    Du {
        /// Store locator.
        store: String,
        /// The node to start from.
        #[arg(default_value = "/")]
        node: String,
        /// Print a JSON list: path, node_type, logical_bytes, stored_bytes, ratio per node.
        #[arg(long)]
        json: bool,
    },
    /// Show a node's metadata and storage figures.
    #[command(
        after_help = "Examples:\n  zarrdb info data.zarrdb /temperature\n  zarrdb info data.zarrdb / --json | jq .children"
    )]
    Info {
        /// Store locator.
        store: String,
        /// Node path inside the store (default: the root).
        #[arg(default_value = "/")]
        node: String,
        /// Print one JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print an array's values.
    #[command(
        after_help = "Examples:\n  zarrdb cat data.zarrdb /temperature --region 0,0:5,0:5\n  zarrdb cat data.zarrdb /temperature --npy > temperature.npy\n  zarrdb cat data.zarrdb /temperature --raw --region -1,:,: | od -f | head"
    )]
    Cat {
        /// Store locator.
        store: String,
        /// Array path inside the store.
        array: String,
        /// Region, one entry per dimension: `start:stop`, `:`, or an index; e.g. "0:10,5,:".
        #[arg(long, allow_hyphen_values = true)]
        region: Option<String>,
        /// Print nested JSON lists on one line.
        #[arg(long, conflicts_with_all = ["raw", "npy"])]
        json: bool,
        /// Write the C-order little-endian element bytes to stdout.
        #[arg(long, conflicts_with = "npy")]
        raw: bool,
        /// Write a NumPy `.npy` file to stdout (`numpy.load` reads it); dimensions selected by a
        /// single index are dropped, as in NumPy.
        #[arg(long)]
        npy: bool,
    },
    /// Decode every chunk of every array and verify checksums; non-zero exit on any problem.
    #[command(
        after_help = "Examples:\n  zarrdb check data.zarrdb && echo intact\n  zarrdb check lmdb:/srv/env | grep PROBLEM\nExit status: 0 intact, 1 problems found (or the store cannot be opened)."
    )]
    Check {
        /// Store locator.
        store: String,
        /// Print one JSON document: groups, arrays, chunks, problems [{where, reason}], notes.
        #[arg(long)]
        json: bool,
    },
    /// Give the space of erased and overwritten data back to the file system: the live data moves to
    /// the front of the file, which is then cut.
    ///
    /// Each step is a commit, so an interrupted compaction leaves the database intact. redb and LMDB
    /// (on LMDB a compacted copy replaces data.mdb); sled: refused.
    #[command(
        after_help = "Examples:\n  zarrdb rm data.zarrdb /scratch --recursive && zarrdb compact data.zarrdb\n  zarrdb compact lmdb:/srv/env --json"
    )]
    Compact {
        /// Database locator: a redb file, or `redb:` + PATH.
        database: String,
        /// On a bucket database (`zarrdb+s3://`), delete garbage once it is this many seconds old
        /// by the server's clock (0: all of it) and keep commits superseded within that time for
        /// their readers; default 3600. Commits in flight lose nothing whatever the age.
        #[arg(long, value_name = "SECONDS")]
        older_than: Option<u64>,
        /// Print one JSON document: database, backend, bytes_before, bytes_after.
        #[arg(long)]
        json: bool,
    },
    /// Show the commits of a database that keeps history, newest first: id, time (seconds since
    /// the Unix epoch), changes, bytes written, tags, message.
    #[command(after_help = "Examples:\n  zarrdb log data.zarrdb\n  zarrdb log lmdb:/srv/env --json")]
    Log {
        /// Database locator.
        database: String,
        /// The branch whose commits to show (first parents from its head).
        #[arg(long, default_value = "main")]
        branch: String,
        /// Print one JSON document per commit: id, parent, merged, time_us, message, author, changes, bytes_written, tags.
        #[arg(long)]
        json: bool,
    },
    /// List, make or delete branches of a database that keeps history. Commits to a branch other
    /// than main are kept in history alone until a merge; read one as `DB@BRANCH`.
    #[command(
        after_help = "Examples:\n  zarrdb branch data.zarrdb\n  zarrdb branch data.zarrdb trial --at paper-2026\n  zarrdb branch data.zarrdb trial --delete"
    )]
    Branch {
        /// Database locator.
        database: String,
        /// The branch to make (or delete); none lists every branch and its head.
        name: Option<String>,
        /// The version the new branch starts at: a commit id, a tag or a branch.
        #[arg(long, default_value = "main", requires = "name")]
        at: String,
        /// Delete the branch instead (its commits stay readable by id until they expire).
        #[arg(long, conflicts_with = "at", requires = "name")]
        delete: bool,
        /// Print one JSON document per branch: name, head.
        #[arg(long)]
        json: bool,
    },
    /// Merge a version into a branch: a fast-forward when the branch's head is an ancestor of it,
    /// otherwise a merge commit, refused (exit 3, nothing written) when a key changed on both
    /// sides to different values; the conflicting keys are listed.
    #[command(
        after_help = "Examples:\n  zarrdb merge data.zarrdb trial\n  zarrdb merge data.zarrdb main --into trial -m \"catch up\""
    )]
    Merge {
        /// Database locator.
        database: String,
        /// The version to merge: a branch, a tag or a commit id.
        from: String,
        /// The branch to merge into.
        #[arg(long, default_value = "main")]
        into: String,
        /// The merge commit's message.
        #[arg(short, long)]
        message: Option<String>,
    },
    /// Point a branch at any version (main's keys are rewritten to hold it); the commits it
    /// leaves stay readable by id until they expire.
    #[command(after_help = "Examples:\n  zarrdb reset data.zarrdb main --to before-fix")]
    Reset {
        /// Database locator.
        database: String,
        /// The branch to move.
        branch: String,
        /// The version it points at afterwards: a commit id, a tag or a branch.
        #[arg(long)]
        to: String,
    },
    /// Make a node (or the whole hierarchy, `/`) hold again what it held in an older version, as a
    /// new commit on a branch; history is never rewritten.
    #[command(after_help = "Examples:\n  zarrdb restore data.zarrdb /temperature --to before-fix")]
    Restore {
        /// Database locator.
        database: String,
        /// The node to restore: an array or group path (`/` for everything).
        node: String,
        /// The version to restore it to: a commit id, a tag or a branch.
        #[arg(long)]
        to: String,
        /// The branch the restoring commit goes to.
        #[arg(long, default_value = "main")]
        branch: String,
    },
    /// Name a version of a database that keeps history with a tag, for good (or delete a tag: its
    /// name is never used again).
    #[command(
        after_help = "Examples:\n  zarrdb tag data.zarrdb paper-2026\n  zarrdb tag data.zarrdb before-fix --at 000000000000002a\n  zarrdb tag data.zarrdb draft --delete"
    )]
    Tag {
        /// Database locator.
        database: String,
        /// The tag.
        name: String,
        /// The version to tag: a commit id (16 hexadecimal digits), `main`, or another tag.
        #[arg(long, default_value = "main")]
        at: String,
        /// Delete the tag instead.
        #[arg(long, conflicts_with = "at")]
        delete: bool,
    },
    /// Expire old versions of a database that keeps history: every version older than the one
    /// kept (and not tagged) is refused from then on, and `zarrdb gc` frees what only they read.
    #[command(
        after_help = "Examples:\n  zarrdb expire data.zarrdb --older-than 30d && zarrdb gc data.zarrdb\n  zarrdb expire data.zarrdb --keep main   # keep the head and the tagged versions"
    )]
    Expire {
        /// Database locator.
        database: String,
        /// Keep this version and every later one: a commit id (16 hexadecimal digits), `main`, or a tag.
        #[arg(long, required_unless_present = "older_than", conflicts_with = "older_than")]
        keep: Option<String>,
        /// Keep the version that was current this long ago, and every later one: a number and
        /// a unit, s, m, h or d (`30d`, `12h`).
        #[arg(long)]
        older_than: Option<String>,
    },
    /// Free what only expired versions of a database that keeps history read (`zarrdb expire`),
    /// in steps that writers interleave with; `zarrdb compact` then gives the space back.
    #[command(after_help = "Examples:\n  zarrdb gc data.zarrdb\n  zarrdb gc lmdb:/srv/env --json")]
    Gc {
        /// Database locator.
        database: String,
        /// Print one JSON document: versions, values, freed_bytes.
        #[arg(long)]
        json: bool,
    },
    /// Run the benchmark workloads of BENCHMARKS.md and print the figures.
    #[command(
        after_help = "Examples:\n  zarrdb bench --workload big_zstd --backend redb --runs 1\n  zarrdb bench --workload group_commit --backend redb --backend lmdb --json"
    )]
    Bench {
        /// Workload (repeatable): big_zstd, big_raw, small_chunks, sharded, sharded_partial, list_children,
        /// append_rows, concurrent_unaligned, group_commit, group_commit_new, import_export, compact, history, history_gc.
        /// Default: the four whole-array ones.
        #[arg(long = "workload")]
        workloads: Vec<String>,
        /// Backend (repeatable): redb, lmdb, sled, directory, memory. Default: redb, lmdb, sled, directory.
        #[arg(long = "backend")]
        backends: Vec<String>,
        /// Runs per figure; the median is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Print one JSON array of figures.
        #[arg(long)]
        json: bool,
        /// Where stores are created (default: the system temporary directory).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// Commits on the databases: `durable` (fsync at every commit, the default) or `fast`.
        /// The directory store never fsyncs.
        #[arg(long, default_value = "durable", value_parser = ["durable", "fast"])]
        durability: String,
    },
    /// Import a Zarr hierarchy (v3, v2, a v1 array or the 2020 draft layout) from a folder or a
    /// zip archive into a database, in one transaction. v2/v1/draft metadata becomes v3; chunk
    /// bytes are copied as they are.
    #[command(
        after_help = "Examples:\n  zarrdb import downloaded.zarr data.zarrdb\n  zarrdb import archive.zip lmdb:/srv/env --at /runs/2026 --exclude '/scratch'"
    )]
    Import {
        /// The folder, `.zip` file or `s3://bucket/prefix` to read.
        source: String,
        /// Database locator (created when missing): a redb file, or `lmdb:`, `sled:`, `redb:` + PATH.
        database: String,
        /// Where the source's root lands in the database.
        #[arg(long, default_value = "/")]
        at: String,
        /// Leave out the nodes matching this node-path pattern and their subtrees (repeatable):
        /// `/grid` excludes grid and everything below; `*` and `?` match within one segment.
        #[arg(long = "exclude", value_name = "PATTERN")]
        exclude: Vec<String>,
        /// Skip nodes whose metadata cannot be imported (unknown codec, invalid or unconvertible
        /// metadata) with their subtrees, and import the rest; each is printed. Default: fail.
        #[arg(long)]
        skip_unreadable: bool,
        /// Print the report as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Export a node of a database, from one snapshot, to a new folder, a new `.zip` archive or
    /// object storage.
    ///
    /// Chunk bytes are copied as they are. To `s3://`, the root zarr.json is written last, so a
    /// reader finds no hierarchy until the export is complete; a destination holding anything is
    /// refused unless --overwrite, and of two exports racing for one place one wins.
    #[command(
        after_help = "Examples:\n  zarrdb export data.zarrdb share.zarr\n  zarrdb export data.zarrdb runs-2026.zip --node /runs/2026\n  zarrdb export data.zarrdb s3://datasets/run1 --overwrite"
    )]
    Export {
        /// Database locator.
        database: String,
        /// The folder or `.zip` file to create (it must not exist), or `s3://bucket/prefix`.
        destination: String,
        /// To s3:// only: replace what the destination holds, and take over the claim of an
        /// export that died there. Never while another export to the same place runs.
        #[arg(long)]
        overwrite: bool,
        /// The node to export; it becomes the root of the result.
        #[arg(long, default_value = "/")]
        node: String,
        /// Do not write consolidated metadata into the exported root group's zarr.json.
        #[arg(long)]
        no_consolidated: bool,
        /// Print the report as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Create an array (and any missing parent groups), in one transaction on a database.
    ///
    /// A missing database or folder is created.
    #[command(
        after_help = "Examples:\n  zarrdb create data.zarrdb /temperature --dtype float32 --shape 365,720,1440 \\\n      --chunks 1,720,1440 --codec zstd:3 --fill NaN --dims time,lat,lon --attrs '{\"units\": \"K\"}'\n  zarrdb create lmdb:runs /images --dtype uint16 --shape 100000,512,512 --chunks 1,256,256 --shard 64,512,512"
    )]
    Create {
        /// Store locator: a database file, an LMDB or sled folder, a directory; or `redb:`, `lmdb:`, `sled:`, `dir:` + PATH.
        store: String,
        /// Path of the new array, e.g. /group/array.
        array: String,
        /// Data type: a Zarr name (bool, int8..int64, uint8..uint64, float16/32/64, complex64/128,
        /// string, variable_length_bytes, r<bits>, ...) or the JSON of an extension type.
        #[arg(long)]
        dtype: String,
        /// Shape, e.g. 365,720,1440 (empty for a 0-dimensional array).
        #[arg(long, allow_hyphen_values = true)]
        shape: String,
        /// Chunk shape (the inner chunks when sharded); default: chunks of at most 1 MiB.
        #[arg(long)]
        chunks: Option<String>,
        /// Store the chunks in shards of this shape (a multiple of the chunk shape).
        #[arg(long)]
        shard: Option<String>,
        /// A codec, in order (repeatable): zstd[:LEVEL], gzip[:LEVEL], blosc[:CNAME[:CLEVEL[:SHUFFLE]]],
        /// crc32c, bytes[:ENDIAN], transpose:ORDER, or a codec's JSON. `bytes` is added where none is given.
        #[arg(long = "codec", value_name = "CODEC")]
        codecs: Vec<String>,
        /// Fill value, as zarr.json writes it: 0, 1.5, NaN, Infinity, true, "text".
        #[arg(long, allow_hyphen_values = true)]
        fill: Option<String>,
        /// Dimension names, e.g. time,lat,lon (an empty name leaves that dimension unnamed).
        #[arg(long)]
        dims: Option<String>,
        /// Attributes, a JSON object.
        #[arg(long)]
        attrs: Option<String>,
    },
    /// Create a group (and any missing parents).
    ///
    /// A missing database or folder is created.
    #[command(after_help = "Example:\n  zarrdb mkgroup data.zarrdb /runs/2026 --attrs '{\"operator\": \"ana\"}'")]
    Mkgroup {
        /// Store locator.
        store: String,
        /// Path of the new group.
        group: String,
        /// Attributes, a JSON object.
        #[arg(long)]
        attrs: Option<String>,
    },
    /// Remove a node: an array with all its chunks, or a group (with --recursive when it holds
    /// anything), in one transaction on a database.
    #[command(
        after_help = "Examples:\n  zarrdb rm data.zarrdb /scratch/tmp_array\n  zarrdb rm data.zarrdb /runs/2025 --recursive"
    )]
    Rm {
        /// Store locator.
        store: String,
        /// Path of the node.
        node: String,
        /// Remove a group with everything below it.
        #[arg(long, short)]
        recursive: bool,
    },
    /// Move or rename a node with everything below it, in one transaction on a database (every value is
    /// copied once, nothing is re-encoded).
    ///
    /// The destination must not exist.
    #[command(after_help = "Example:\n  zarrdb mv data.zarrdb /scratch/result /results/2026-11-27")]
    Mv {
        /// Store locator.
        store: String,
        /// The node to move.
        from: String,
        /// Its new path.
        to: String,
    },
    /// Print a node's attributes as JSON, or change them with --set and --delete (deletions
    /// first, then assignments, in one write).
    #[command(
        after_help = "Examples:\n  zarrdb attrs data.zarrdb /temperature\n  zarrdb attrs data.zarrdb /temperature --set units=K --set 'valid_range=[0, 400]' --delete comment"
    )]
    Attrs {
        /// Store locator.
        store: String,
        /// Path of the node.
        #[arg(default_value = "/")]
        node: String,
        /// Set KEY to VALUE (repeatable); VALUE is JSON when it parses as JSON, text otherwise.
        #[arg(long, value_name = "KEY=VALUE", allow_hyphen_values = true)]
        set: Vec<String>,
        /// Delete KEY (repeatable); a key that is not there is an error.
        #[arg(long, value_name = "KEY")]
        delete: Vec<String>,
    },
    /// Change an array's shape; chunks outside the new shape are erased and a regrown region reads as
    /// the fill value.
    ///
    /// One transaction on a database.
    #[command(after_help = "Example:\n  zarrdb resize data.zarrdb /temperature --shape 730,720,1440")]
    Resize {
        /// Store locator.
        store: String,
        /// Path of the array.
        array: String,
        /// The new shape.
        #[arg(long)]
        shape: String,
    },
    /// Append a NumPy .npy file to an array along an axis: the array grows and the data is written, in
    /// one transaction on a database.
    ///
    /// The file's data type must be the array's and its shape the array's in every other dimension (or,
    /// for one slice, without the axis).
    #[command(
        after_help = "Example:\n  python -c 'import numpy as np; np.save(\"day.npy\", np.zeros((1, 720, 1440), \"<f4\"))'\n  zarrdb append data.zarrdb /temperature day.npy --axis 0"
    )]
    Append {
        /// Store locator.
        store: String,
        /// Path of the array.
        array: String,
        /// A .npy file, or - for standard input.
        file: String,
        /// The axis to grow.
        #[arg(long, default_value_t = 0)]
        axis: usize,
    },
    /// Write a NumPy .npy file into an array: the whole array, or the region given, whose shape the
    /// file must have.
    ///
    /// One transaction on a database.
    #[command(
        after_help = "Examples:\n  zarrdb write data.zarrdb /temperature day.npy --region 0,:,:\n  zarrdb cat a.zarrdb /x --npy | zarrdb write b.zarrdb /x -"
    )]
    Write {
        /// Store locator.
        store: String,
        /// Path of the array.
        array: String,
        /// A .npy file, or - for standard input.
        file: String,
        /// Region, one entry per dimension: `start:stop`, `:`, or an index; e.g. "0:10,5,:".
        #[arg(long, allow_hyphen_values = true)]
        region: Option<String>,
    },
    /// Copy a node with everything below it between stores: into a database (one transaction, created
    /// when missing), a folder, or a new zip archive (from a database).
    ///
    /// Chunk bytes are copied as they are, never decoded. With --history, between two databases
    /// that keep history: push or pull every version, tag and branch (only what the destination
    /// lacks is written; refused when it holds commits the source lacks).
    #[command(
        after_help = "Examples:\n  zarrdb cp data.zarrdb:/runs/2026 archive.zarrdb:/2026\n  zarrdb cp dir:downloaded.zarr data.zarrdb:/imported\n  zarrdb cp data.zarrdb:/runs/2026 dir:share/2026.zarr\n  zarrdb cp lmdb:/srv/env:/grid grid.zip\n  zarrdb cp --history data.zarrdb zarrdb+s3://lab/runs   (push)\n  zarrdb cp --history zarrdb+s3://lab/runs copy.zarrdb   (pull)"
    )]
    Cp {
        /// The source: a store locator, then optionally `:/` and a node path (`data.zarrdb:/grid`).
        source: String,
        /// The destination: a store locator, then optionally `:/` and where the node lands (which
        /// must be free).
        destination: String,
        /// Mirror a whole database that keeps history into another (created with history when
        /// missing): every version, tag and branch.
        #[arg(long)]
        history: bool,
        /// Print the report as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Compare two hierarchies or nodes, in any two stores: nodes on one side only, node kinds, array
    /// metadata, attributes and values.
    ///
    /// Exit status 0 when they are equal, 1 when not.
    #[command(
        after_help = "Examples:\n  zarrdb diff data.zarrdb exported.zarr\n  zarrdb diff data.zarrdb:/runs/1 data.zarrdb:/runs/2 --json"
    )]
    Diff {
        /// One side: a store locator, then optionally `:/` and a node path (`data.zarrdb:/grid`).
        a: String,
        /// The other side.
        b: String,
        /// Print one JSON document: {"equal", "differences": [{"path", "kind", "detail"}]}.
        #[arg(long)]
        json: bool,
    },
    /// Print a completion script for a shell, to load at start-up.
    #[command(
        after_help = "Examples:\n  source <(zarrdb completions bash)        # in ~/.bashrc\n  zarrdb completions zsh > ~/.zfunc/_zarrdb\n  zarrdb completions fish > ~/.config/fish/completions/zarrdb.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Build a small real dataset with transactions, read it back and show its tree.
    #[command(after_help = "Examples:\n  zarrdb demo\n  zarrdb demo lmdb:/tmp/demo-env   # keep the dataset, in LMDB")]
    Demo {
        /// Where to build it: a store locator naming nothing yet or an empty folder (default: a
        /// temporary redb file, removed afterwards).
        locator: Option<String>,
    },
}

/// An error the CLI reports: one line, exit status 3 (1 for `check`); or an answer without a
/// message (`diff` found differences: status 1) or, when the reader of the output went away,
/// nothing and status 0 ([`CliError::closed_output`]).
pub(crate) struct CliError {
    message: String,
    quiet: bool,
    status: u8,
}

impl CliError {
    /// An error with this message: exit status 3.
    pub(crate) fn new(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), quiet: false, status: 3 }
    }

    /// This error as `check` reports it: any failure of the check, status 1 (quiet exits keep
    /// theirs).
    pub(crate) fn into_check_failure(self) -> CliError {
        if self.quiet {
            self
        } else {
            CliError { status: 1, ..self }
        }
    }

    /// Not an error but an answer: `diff` found differences. No message; exit status 1.
    pub(crate) fn differs() -> CliError {
        CliError { message: String::new(), quiet: true, status: 1 }
    }

    /// Whether this ends the command without a message ([`CliError::closed_output`], [`CliError::differs`]).
    pub(crate) fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// The message, for unit tests of the commands.
    #[cfg(test)]
    pub(crate) fn message_for_tests(&self) -> &str {
        &self.message
    }

    /// Standard output was closed by its reader (`| head`): the command stops, quietly.
    pub(crate) fn closed_output() -> CliError {
        CliError { message: String::new(), quiet: true, status: 0 }
    }
}

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(err: E) -> Self {
        CliError::new(err.to_string())
    }
}

pub(crate) type CliResult = Result<(), CliError>;

/// `zarrdb completions SHELL`: clap's script for the shell, from the same definitions as the
/// parser, so it cannot drift from the commands.
fn completions(shell: clap_complete::Shell) -> CliResult {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "zarrdb", &mut script);
    out!("{}", String::from_utf8_lossy(&script))
}

pub(crate) fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tree { store, long, json } => tree::run(&store, long, json),
        Command::Du { store, node, json } => du::run(&store, &node, json),
        Command::Info { store, node, json } => info::run(&store, &node, json),
        Command::Cat { store, array, region, json, raw, npy } => {
            let format = match (json, raw, npy) {
                (true, _, _) => cat::Format::Json,
                (_, true, _) => cat::Format::Raw,
                (_, _, true) => cat::Format::Npy,
                _ => cat::Format::Text,
            };
            cat::run(&store, &array, region.as_deref(), format)
        }
        Command::Check { store, json } => check::run(&store, json),
        Command::Compact { database, older_than, json } => compact::run(&database, older_than, json),
        Command::Log { database, branch, json } => history::log(&database, &branch, json),
        Command::Branch { database, name, at, delete, json } => {
            history::branch(&database, name.as_deref(), &at, delete, json)
        }
        Command::Merge { database, from, into, message } => history::merge(&database, &from, &into, message.as_deref()),
        Command::Reset { database, branch, to } => history::reset(&database, &branch, &to),
        Command::Restore { database, node, to, branch } => history::restore(&database, &node, &to, &branch),
        Command::Tag { database, name, at, delete } => history::tag(&database, &name, &at, delete),
        Command::Expire { database, keep, older_than } => {
            history::expire(&database, keep.as_deref(), older_than.as_deref())
        }
        Command::Gc { database, json } => history::gc(&database, json),
        Command::Bench { workloads, backends, runs, json, dir, durability } => {
            bench::run(bench::Options { workloads, backends, runs, json, dir, durable: durability == "durable" })
        }
        Command::Demo { locator } => demo::run(locator),
        Command::Completions { shell } => completions(shell),
        Command::Cp { source, destination, history: true, json } => copy::mirror(&source, &destination, json),
        Command::Cp { source, destination, history: false, json } => copy::run(&source, &destination, json),
        Command::Diff { a, b, json } => diff::run(&a, &b, json),
        Command::Create { store, array, dtype, shape, chunks, shard, codecs, fill, dims, attrs } => {
            let spec = create::ArraySpec { dtype, shape, chunks, shard, codecs, fill, dims, attrs };
            create::array(&store, &array, &spec)
        }
        Command::Mkgroup { store, group, attrs } => create::group(&store, &group, attrs.as_deref()),
        Command::Rm { store, node, recursive } => nodes::remove(&store, &node, recursive),
        Command::Mv { store, from, to } => nodes::rename(&store, &from, &to),
        Command::Attrs { store, node, set, delete } => attrs::run(&store, &node, &set, &delete),
        Command::Resize { store, array, shape } => write::resize(&store, &array, &shape),
        Command::Append { store, array, file, axis } => write::append(&store, &array, &file, axis),
        Command::Write { store, array, file, region } => write::write(&store, &array, &file, region.as_deref()),
        Command::Import { source, database, at, exclude, skip_unreadable, json } => {
            transfer::import(&source, &database, &at, exclude, skip_unreadable, json)
        }
        Command::Export { database, destination, overwrite, node, no_consolidated, json } => {
            transfer::export(&database, &destination, &node, !no_consolidated, overwrite, json)
        }
    };
    bench::report_peak_rss();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError { quiet: true, status, .. }) => ExitCode::from(status),
        Err(CliError { message, status, .. }) => {
            // One line, whatever the message holds.
            eprintln!("zarrdb: error: {}", message.replace(['\n', '\r'], " "));
            ExitCode::from(status)
        }
    }
}
