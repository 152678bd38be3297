/*
 * quereus/abi.h — the Quereus plugin C ABI, major version 1.
 *
 * This header is the binary contract between the Quereus host and every plugin
 * (storage modules, collations, functions). It is plain C so that a plugin built
 * with a different compiler or standard library still loads.
 *
 * Rules of the boundary (see docs/sdk.md):
 *   - One extern "C" entry point per ABI major: qrs_plugin_entry_v1. A plugin with
 *     another major exports another symbol and is refused by this host.
 *   - Every struct that may grow starts with `uint32_t struct_size`. Fields are only
 *     ever appended. A reader checks struct_size before touching a field past the
 *     size it was compiled with (QRS_HAS_FIELD). A null function slot means "not
 *     implemented"; the host falls back. An array of such structs (columns,
 *     primary_key, filters) is strided by its elements' struct_size, which is the
 *     same for every element of one array.
 *   - No C++ type, exception or RTTI crosses the boundary. Strings and blobs are
 *     (pointer, length) pairs of UTF-8 / bytes and are NOT NUL-terminated.
 *   - Errors: every fallible call returns a qrs_status and may describe the failure
 *     through the qrs_error it receives (qrs_error_set). The message is copied by
 *     the host; the plugin keeps ownership of its buffer.
 *   - Memory: whoever allocates frees. Data handed to a callee is borrowed for the
 *     duration of the call. Data a callee hands back (rows in a batch, rows in an
 *     update result) is owned by the callee and stays valid until the next call on
 *     the same object, or until the object is released.
 *
 * Thread safety: unless a slot says otherwise, the host serializes calls on one
 * object (a module, a table, a cursor, a connection). Different tables of one
 * module may be called from different threads, so module-wide state must be
 * synchronized by the plugin.
 */
#ifndef QUEREUS_ABI_H_
#define QUEREUS_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QRS_ABI_MAJOR 1
#define QRS_ABI_MINOR 12

#if defined(_WIN32)
#define QRS_EXPORT __declspec(dllexport)
#else
#define QRS_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct received from the other side is large enough to hold `field`. */
#define QRS_HAS_FIELD(ptr, type, field) \
  ((ptr) != NULL && (ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ------------------------------------------------------------------------- */
/* Status codes                                                              */
/* ------------------------------------------------------------------------- */

/* The codes mirror the reference engine's StatusCode. Codes carry semantics:
 * QRS_UNSUPPORTED makes the host fall back (or refuse cleanly), QRS_BUSY is
 * retryable, QRS_CONSTRAINT is a constraint violation the host reports to SQL. */
typedef enum qrs_status {
  QRS_OK = 0,
  QRS_ERROR = 1,       /* generic failure, message says why */
  QRS_INTERNAL = 2,    /* a bug in the plugin or host */
  QRS_PERM = 3,
  QRS_ABORT = 4,
  QRS_BUSY = 5,        /* retryable: the resource is in use */
  QRS_LOCKED = 6,
  QRS_NOMEM = 7,
  QRS_READONLY = 8,
  QRS_INTERRUPT = 9,
  QRS_IOERR = 10,
  QRS_CORRUPT = 11,
  QRS_NOTFOUND = 12,
  QRS_FULL = 13,
  QRS_CANTOPEN = 14,
  QRS_PROTOCOL = 15,
  QRS_EMPTY = 16,
  QRS_SCHEMA = 17,
  QRS_TOOBIG = 18,
  QRS_CONSTRAINT = 19, /* a constraint was violated */
  QRS_MISMATCH = 20,   /* a value has the wrong type */
  QRS_MISUSE = 21,     /* an API was called in a way its contract forbids */
  QRS_NOLFS = 22,
  QRS_AUTH = 23,
  QRS_FORMAT = 24,
  QRS_RANGE = 25,
  QRS_NOTADB = 26,
  QRS_UNSUPPORTED = 27, /* the plugin does not implement this; host falls back */
  QRS_ROW = 100,        /* a cursor produced a batch with rows */
  QRS_DONE = 101        /* a cursor is exhausted */
} qrs_status;

/* ------------------------------------------------------------------------- */
/* Strings, values, rows                                                     */
/* ------------------------------------------------------------------------- */

/* A borrowed UTF-8 string or byte string. Not NUL-terminated. */
typedef struct qrs_string {
  const char* data;
  size_t len;
} qrs_string;

/* The physical type of a value. Logical types (DATE, TIME, …) travel as their
 * canonical physical representation (TEXT for temporals, JSON as canonical text). */
typedef enum qrs_value_type {
  QRS_TYPE_NULL = 0,
  QRS_TYPE_INTEGER = 1, /* exact int64 */
  QRS_TYPE_REAL = 2,    /* IEEE double */
  QRS_TYPE_TEXT = 3,    /* well-formed UTF-8 */
  QRS_TYPE_BLOB = 4,    /* bytes, may contain 0x00 */
  QRS_TYPE_BOOLEAN = 5, /* 0 or 1 in u.boolean */
  QRS_TYPE_JSON = 6     /* canonical JSON text in u.str */
} qrs_value_type;

/* A tagged value. For TEXT, BLOB and JSON, u.str points at memory owned by the
 * side that produced the value (see the memory rules at the top). */
typedef struct qrs_value {
  uint32_t type; /* qrs_value_type */
  uint32_t reserved_;
  union {
    int64_t integer;
    double real;
    int32_t boolean;
    qrs_string str;
  } u;
} qrs_value;

/* A borrowed row: `count` cells in column order. */
typedef struct qrs_row {
  const qrs_value* cells;
  uint32_t count;
} qrs_row;

/* ------------------------------------------------------------------------- */
/* Errors                                                                    */
/* ------------------------------------------------------------------------- */

/* Filled by the callee to explain a non-OK status. Created by the caller. */
typedef struct qrs_error {
  uint32_t struct_size;
  void* ctx; /* caller's context, opaque to the callee */
  /* Records a message (copied). May be called more than once; the last wins. */
  void (*set_message)(struct qrs_error* self, const char* message, size_t len);
} qrs_error;

/* ------------------------------------------------------------------------- */
/* Collations                                                                */
/* ------------------------------------------------------------------------- */

/* A resolved collation the host hands to modules (inside key descriptions) and
 * that plugins register. compare returns <0, 0, >0 like memcmp. It must be a
 * total order, pure and thread-safe. */
typedef int (*qrs_collation_compare_fn)(void* user, const char* a, size_t a_len, const char* b,
                                        size_t b_len);

/* In a table schema, `user` and `compare` stay valid until that table is destroyed
 * (a collation is never dropped while a table uses it), so a module may keep them
 * in storage that outlives one connected instance. */
typedef struct qrs_collation_ref {
  uint32_t struct_size;
  qrs_string name;                  /* upper-case canonical name, e.g. "BINARY" */
  void* user;                       /* pass to compare */
  qrs_collation_compare_fn compare; /* NULL means BINARY (memcmp then length) */
} qrs_collation_ref;

/* ------------------------------------------------------------------------- */
/* Table schema handed to modules                                            */
/* ------------------------------------------------------------------------- */

/* Logical type ids (the declared type of a column after affinity resolution). */
typedef enum qrs_logical_type {
  QRS_LT_ANY = 0,
  QRS_LT_INTEGER = 1,
  QRS_LT_REAL = 2,
  QRS_LT_TEXT = 3,
  QRS_LT_BLOB = 4,
  QRS_LT_BOOLEAN = 5,
  QRS_LT_JSON = 6,
  QRS_LT_NUMERIC = 7,
  QRS_LT_DATE = 8,
  QRS_LT_TIME = 9,
  QRS_LT_DATETIME = 10,
  QRS_LT_TIMESPAN = 11
} qrs_logical_type;

typedef struct qrs_column_def {
  uint32_t struct_size;
  qrs_string name;         /* display casing */
  qrs_string type_name;    /* declared type text, may be empty */
  uint32_t logical_type;   /* qrs_logical_type */
  uint8_t not_null;        /* 1 when NULL is refused */
  uint8_t primary_key;     /* 1 when the column is a member of the primary key */
  uint8_t reserved_[2];
  qrs_collation_ref collation; /* the column's collation */
} qrs_column_def;

/* One member of a key (the primary key, or later an index). */
typedef struct qrs_key_column {
  uint32_t struct_size;
  uint32_t column_index;       /* index into qrs_table_schema.columns */
  uint8_t desc;                /* 1 for a DESC member */
  uint8_t reserved_[3];
  /* Comparison for TEXT and JSON values of this member. The host also uses it for a
     logical type whose order is not its text's: TIMESPAN columns get a duration order,
     JSON columns a structural one (numbers by value, objects by sorted keys). */
  qrs_collation_ref collation;
} qrs_key_column;

/* A module argument from `USING module(key = value, …)` or the YAML module options. */
typedef struct qrs_option {
  qrs_string key;
  qrs_value value;
} qrs_option;

/* The schema of one table. Borrowed for the duration of the call that receives it;
 * a module that keeps it must copy what it needs. The primary key is never absent:
 * a table declared without one is keyed on all its columns (in column order), and
 * `primary key ()` gives key_count == 0 (a singleton table of at most one row). */
typedef struct qrs_table_schema {
  uint32_t struct_size;
  qrs_string schema_name; /* canonical lower-case, e.g. "main" */
  qrs_string table_name;  /* display casing, bare (no schema prefix) */
  const qrs_column_def* columns;
  uint32_t column_count;
  const qrs_key_column* primary_key;
  uint32_t key_count;
  const qrs_option* options;
  uint32_t option_count;
} qrs_table_schema;

/* ------------------------------------------------------------------------- */
/* Access-plan negotiation                                                   */
/* ------------------------------------------------------------------------- */

typedef enum qrs_filter_op {
  QRS_OP_EQ = 1,
  QRS_OP_GT = 2,
  QRS_OP_GE = 3,
  QRS_OP_LT = 4,
  QRS_OP_LE = 5,
  QRS_OP_IN = 6,
  QRS_OP_IS_NULL = 7,
  QRS_OP_IS_NOT_NULL = 8,
  /* 1.11: a predicate of an access form (docs/decompositions.md "Auxiliary access"):
     qrs_filter.form names the form ("prefix", "contains", or one a plugin function
     declares), `value` is its argument. Sent only to modules of ABI minor >= 11; a
     module that does not know the form leaves it unhandled (the engine then evaluates
     the predicate itself). */
  QRS_OP_FORM = 9
} qrs_filter_op;

/* One predicate `column op value` the engine offers to the module. */
typedef struct qrs_filter {
  uint32_t struct_size;
  uint32_t column_index;
  uint32_t op;          /* qrs_filter_op */
  uint8_t usable;       /* 0: the module must not rely on this filter */
  uint8_t has_value;    /* 1 when value / in_values are known (always at scan time) */
  uint8_t reserved_[2];
  qrs_value value;      /* the comparand for EQ/GT/GE/LT/LE */
  const qrs_value* in_values; /* the IN list (op == QRS_OP_IN) */
  uint32_t in_count;          /* IN list length, known even when has_value == 0 */
  /* 1.11: the access form's name when op == QRS_OP_FORM (empty otherwise). Arrays of
     qrs_filter are walked by their struct_size, so a 1.10 reader skips it. */
  qrs_string form;
} qrs_filter;

typedef struct qrs_order_spec {
  uint32_t column_index;
  uint8_t desc;
  uint8_t reserved_[3];
} qrs_order_spec;

/* What the engine asks: which of these filters can you answer, at what cost, in
 * which order? Called at plan time; must be cheap, pure and deterministic. */
typedef struct qrs_plan_request {
  uint32_t struct_size;
  const qrs_filter* filters;
  uint32_t filter_count;
  const qrs_order_spec* ordering; /* required output ordering, may be empty */
  uint32_t ordering_count;
  int64_t limit;          /* -1 when absent */
  int64_t offset;         /* 0 when absent */
  double estimated_rows;  /* < 0 when unknown */
} qrs_plan_request;

/* The module's answer. The host allocates handled_filters with filter_count
 * entries, zeroed; the module sets handled_filters[i] = 1 for each filter it
 * guarantees (the engine may still re-check). */
typedef struct qrs_plan_result {
  uint32_t struct_size;
  uint8_t* handled_filters;
  double cost;            /* ~1.0 per sequentially scanned row */
  double rows;            /* rows matched; 0 only when provably empty */
  uint8_t provides_ordering; /* 1 when rows come out in the requested ordering */
  uint8_t reserved_[3];
  int64_t plan_id;        /* module-private plan number, returned in qrs_scan_args */
  char explain[128];      /* NUL-terminated human description, e.g. "pk eq seek" */
} qrs_plan_result;

/* Arguments of a scan: the plan chosen at plan time, with the filters now bound. */
typedef struct qrs_scan_args {
  uint32_t struct_size;
  int64_t plan_id;              /* from qrs_plan_result */
  const qrs_filter* filters;    /* the same filters as in the request, has_value = 1 */
  uint32_t filter_count;
  const uint8_t* handled;       /* what the module claimed for each filter */
  uint8_t provides_ordering;    /* what the module claimed */
  /* 1.1: a `committed.<table>` read — return the last committed state, without this
     connection's uncommitted writes. Only sent to modules declaring committed_reads. */
  uint8_t read_committed;
  uint8_t reserved_[6];
  const qrs_order_spec* ordering;
  uint32_t ordering_count;
  int64_t limit;                /* soft cap (-1 none); already includes the offset */
} qrs_scan_args;

/* ------------------------------------------------------------------------- */
/* Cursors                                                                   */
/* ------------------------------------------------------------------------- */

/* A batch of rows, row-major: cells[r * column_count + c]. Owned by the cursor,
 * valid until the next call on it. */
typedef struct qrs_row_batch {
  uint32_t struct_size;
  const qrs_value* cells;
  uint32_t row_count;
  uint32_t column_count;
} qrs_row_batch;

typedef struct qrs_cursor_vtable {
  uint32_t struct_size;
  /* Fills `out` with the next batch. Returns QRS_ROW (row_count >= 1), QRS_DONE
   * (exhausted, row_count == 0) or an error. REQUIRES: not closed. */
  qrs_status (*next_batch)(void* self, qrs_row_batch* out, qrs_error* err);
  /* Releases the cursor. May be called before exhaustion. Never fails. */
  void (*close)(void* self);
} qrs_cursor_vtable;

typedef struct qrs_cursor {
  void* self;
  const qrs_cursor_vtable* vt;
} qrs_cursor;

/* ------------------------------------------------------------------------- */
/* Writes                                                                    */
/* ------------------------------------------------------------------------- */

typedef enum qrs_row_op { QRS_ROW_INSERT = 1, QRS_ROW_UPDATE = 2, QRS_ROW_DELETE = 3 } qrs_row_op;

typedef enum qrs_conflict {
  QRS_CONFLICT_ABORT = 0,
  QRS_CONFLICT_ROLLBACK = 1,
  QRS_CONFLICT_FAIL = 2,
  QRS_CONFLICT_IGNORE = 3,
  QRS_CONFLICT_REPLACE = 4
} qrs_conflict;

typedef struct qrs_update_args {
  uint32_t struct_size;
  uint32_t op;          /* qrs_row_op */
  uint32_t on_conflict; /* qrs_conflict */
  qrs_row values;       /* insert/update: the full new row in column order */
  qrs_row old_key;      /* update/delete: the key of the existing row, one cell per PK member */
} qrs_update_args;

typedef enum qrs_update_outcome {
  QRS_UPDATE_OK = 0,         /* a row was written; `row` is the stored row, or empty (NULL, 0)
                              * for an insert/update that stored exactly the row given */
  QRS_UPDATE_NOOP = 1,       /* nothing changed (missing key, or IGNORE) */
  QRS_UPDATE_CONSTRAINT = 2  /* a constraint refused the write; nothing changed */
} qrs_update_outcome;

typedef enum qrs_constraint_kind {
  QRS_CONSTRAINT_UNIQUE = 1, /* primary key or unique collision */
  QRS_CONSTRAINT_CHECK = 2,
  QRS_CONSTRAINT_NOT_NULL = 3,
  QRS_CONSTRAINT_FOREIGN_KEY = 4
} qrs_constraint_kind;

/* Rows here are owned by the table and valid until the next call on it. */
typedef struct qrs_update_result {
  uint32_t struct_size;
  uint32_t outcome;          /* qrs_update_outcome */
  uint32_t constraint_kind;  /* qrs_constraint_kind when outcome == CONSTRAINT */
  qrs_row row;               /* OK: the stored row (insert/update) or the deleted row */
  qrs_row replaced_row;      /* OK with REPLACE: the row displaced at the same key */
  qrs_row existing_row;      /* CONSTRAINT: the conflicting row, when known */
} qrs_update_result;

/* ------------------------------------------------------------------------- */
/* Connections (transactions)                                                */
/* ------------------------------------------------------------------------- */

/* A transaction participant. The host calls begin before the first write of a
 * transaction (and before reads that must see it), then commit or rollback.
 * Savepoints are numbered by depth (1 = outermost savepoint inside begin):
 * rollback_to keeps the savepoint open, release merges it into its parent. */
typedef struct qrs_connection_vtable {
  uint32_t struct_size;
  qrs_status (*begin)(void* self, qrs_error* err);
  qrs_status (*commit)(void* self, qrs_error* err);
  qrs_status (*rollback)(void* self, qrs_error* err);
  qrs_status (*savepoint)(void* self, uint32_t depth, qrs_error* err);
  qrs_status (*release_savepoint)(void* self, uint32_t depth, qrs_error* err);
  qrs_status (*rollback_to_savepoint)(void* self, uint32_t depth, qrs_error* err);
  /* Releases the connection; an open transaction is rolled back. Never fails. */
  void (*close)(void* self);
} qrs_connection_vtable;

typedef struct qrs_connection {
  void* self;
  const qrs_connection_vtable* vt;
} qrs_connection;

/* ------------------------------------------------------------------------- */
/* Tables and modules                                                        */
/* ------------------------------------------------------------------------- */

/* ------------------------------------------------------------------------- */
/* Schema changes (1.2: ALTER TABLE)                                         */
/* ------------------------------------------------------------------------- */

/* One ALTER TABLE arm. The arms marked "schema-only" never need a stored row rewritten;
 * the host applies them even to a table without the alter_table slot (or that answers
 * QRS_UNSUPPORTED). The others change stored rows: without the slot they are refused. */
typedef enum qrs_schema_change_kind {
  QRS_CHANGE_ADD_COLUMN = 1,        /* rows grow a cell at column_index (fill per row)    */
  QRS_CHANGE_DROP_COLUMN = 2,       /* rows lose the cell at column_index                  */
  QRS_CHANGE_RENAME_COLUMN = 3,     /* schema-only                                         */
  QRS_CHANGE_SET_DATA_TYPE = 4,     /* every cell of column_index through convert          */
  QRS_CHANGE_SET_NOT_NULL = 5,      /* NULL cells of column_index backfilled (fill) or refused */
  QRS_CHANGE_DROP_NOT_NULL = 6,     /* schema-only                                         */
  QRS_CHANGE_SET_DEFAULT = 7,       /* schema-only (SET DEFAULT and DROP DEFAULT)          */
  QRS_CHANGE_SET_COLLATION = 8,     /* re-key when column_index is a key member            */
  QRS_CHANGE_ALTER_PRIMARY_KEY = 9, /* re-key under new_schema.primary_key                 */
  QRS_CHANGE_ADD_CONSTRAINT = 10,   /* schema-only for the module: the engine validates   */
  QRS_CHANGE_DROP_CONSTRAINT = 11,  /* schema-only                                         */
  QRS_CHANGE_RENAME_CONSTRAINT = 12,/* schema-only                                         */
  QRS_CHANGE_RENAME_TABLE = 13      /* storage follows new_schema.table_name; schema-only for
                                     * a module without the slot (its connected instance
                                     * keeps working under the old storage name)            */
} qrs_schema_change_kind;

/* The change handed to qrs_table_vtable.alter_table. Callbacks are the host's: they
 * compute what only the engine can (default expressions, type coercion). A value a
 * callback writes to `out` is owned by the host and valid until the next callback call. */
typedef struct qrs_schema_change {
  uint32_t struct_size;
  uint32_t kind;          /* qrs_schema_change_kind */
  uint32_t column_index;  /* the column acted on, in the OLD schema; ADD_COLUMN: its index in
                           * the new schema (always the last today) */
  uint32_t reserved_;
  qrs_string name;        /* the column / constraint acted on (renames: the old name) */
  qrs_string new_name;    /* renames: the new name */
  void* ctx;              /* pass to fill / convert */
  /* ADD_COLUMN: the new cell for an existing row (old_row in the old layout).
   * SET_NOT_NULL: the backfill for a NULL cell of old_row; a NULL result means "no
   * backfill" and the module refuses with QRS_CONSTRAINT. NULL slot: NULL. */
  qrs_status (*fill)(void* ctx, const qrs_row* old_row, qrs_value* out, qrs_error* err);
  /* SET_DATA_TYPE: `in` converted to the new type exactly as an INSERT would coerce it;
   * QRS_MISMATCH (message names the value) when it cannot convert. NULL slot: identity. */
  qrs_status (*convert)(void* ctx, const qrs_value* in, qrs_value* out, qrs_error* err);
} qrs_schema_change;

/* ------------------------------------------------------------------------- */
/* The backing-host capability (1.5: materialized views, maintained tables)  */
/* ------------------------------------------------------------------------- */

/* A maintained table's rows are derived by the host from a query over other tables and
 * written only through these privileged slots (the host refuses user DML on it; the
 * module enforces nothing of its own). A module declares the capability with
 * qrs_module_capabilities.backing_host and then implements both table slots below. Its
 * storage must be ordered by primary key with O(log n) keyed upsert / delete / lookup and
 * an ordered prefix scan (open_cursor with EQ filters on leading key members).
 * One table instance is one incarnation of the maintained table: a DROP and re-CREATE
 * yields a new instance, never a reused one. */
typedef enum qrs_maintenance_kind {
  QRS_MAINT_UPSERT = 1,     /* `row` is the full new row: insert it, or replace the row
                             * at its key (under the key's collations) */
  QRS_MAINT_DELETE_KEY = 2  /* `row` is the full primary key (cells in key order): delete
                             * the row at that key, if any */
} qrs_maintenance_kind;

typedef struct qrs_maintenance_op {
  uint32_t struct_size;
  uint32_t kind; /* qrs_maintenance_kind */
  qrs_row row;
} qrs_maintenance_op;

/* Where apply_maintenance reports each change it realized, in op order. `op` is a
 * qrs_row_op: INSERT (old_row NULL), UPDATE (both), DELETE (new_row NULL). The rows are
 * borrowed for the call. A non-OK return stops the application with that status. */
typedef struct qrs_change_sink {
  uint32_t struct_size;
  void* ctx;
  qrs_status (*emit)(void* ctx, uint32_t op, const qrs_row* old_row, const qrs_row* new_row);
} qrs_change_sink;

/* The rows replace_contents installs, pulled one at a time: QRS_ROW with `out` set (the
 * cells are borrowed until the next call), QRS_DONE at the end, any other status is a
 * failure that abandons the replacement. */
typedef struct qrs_row_source {
  uint32_t struct_size;
  void* ctx;
  qrs_status (*next)(void* ctx, qrs_row* out, qrs_error* err);
} qrs_row_source;

typedef struct qrs_table_vtable {
  uint32_t struct_size;
  /* Access-plan negotiation (see qrs_plan_request). NULL: the host full-scans. */
  qrs_status (*best_access_plan)(void* self, const qrs_plan_request* req, qrs_plan_result* out,
                                 qrs_error* err);
  /* Opens a scan. Rows come out in batches through the cursor. Reads see the
   * writes of the table's open transaction. */
  qrs_status (*open_cursor)(void* self, const qrs_scan_args* args, qrs_cursor* out, qrs_error* err);
  /* Insert / update / delete by primary key. Expected constraint outcomes are
   * reported in `out` with QRS_OK, not as an error status. */
  qrs_status (*update)(void* self, const qrs_update_args* args, qrs_update_result* out,
                       qrs_error* err);
  /* Opens the table's transaction participant. The host registers it with its
   * transaction coordinator. */
  qrs_status (*open_connection)(void* self, qrs_connection* out, qrs_error* err);
  /* Disconnects this table instance (storage stays). Never fails. */
  void (*release)(void* self);
  /* 1.2: ALTER TABLE. Brings the storage to `new_schema` (the whole table after the change)
   * by the arm `change` describes: rewrites every stored row the arm affects — committed
   * rows and this instance's uncommitted (pending) ones — and adopts the new schema.
   * On the table (not the module) because the instance owns its transaction's pending rows.
   * All or nothing: any status but QRS_OK leaves storage exactly as it was.
   * QRS_UNSUPPORTED: the module does not implement this arm (the host then applies a
   * schema-only arm itself and refuses a data-affecting one); QRS_CONSTRAINT: a NOT NULL /
   * key collision; QRS_MISMATCH: a value that does not convert; QRS_BUSY: retryable (a
   * state only a rollback could restore blocks it). NULL slot: every arm UNSUPPORTED. */
  qrs_status (*alter_table)(void* self, const qrs_schema_change* change,
                            const qrs_table_schema* new_schema, qrs_error* err);
  /* 1.3: point lookup. `key` holds 1..key_count cells: values of the LEADING primary-key
   * members, in key order (not column order). Finds the first row, in key order, whose
   * leading members equal them under the key's collations (the order the table keeps),
   * as this instance sees the table (its open transaction's writes included) — with a
   * full key, the row at that key. The same answer as a scan with an EQ filter on each of
   * those members, without opening a cursor: the host's probe for a foreign key's parent,
   * a UNIQUE index entry, a row by its key.
   * QRS_OK: found; `out` is the row in column order, owned by the table and valid until
   * the next call on it. QRS_NOTFOUND: no such row (`out` untouched). QRS_UNSUPPORTED:
   * the module does not answer this lookup (the host then scans); the answer may depend on
   * the number of cells but not on their values — the host remembers a refusal per key
   * length for the table instance and does not ask again. QRS_MISUSE: more
   * cells than key members, or none. NULL slot: every lookup UNSUPPORTED. */
  qrs_status (*lookup)(void* self, const qrs_row* key, qrs_row* out, qrs_error* err);
  /* 1.5, backing host: applies `ops` in order to this instance's transaction state — its
   * open transaction's pending writes (begun through its connection), or the committed
   * rows when none is open — exactly as update() would store them (secondary structures
   * and the like kept), and reports through `sink` the changes it REALIZED: an upsert whose
   * row is value-identical (byte for byte, cell by cell; an INTEGER 5 and a REAL 5.0
   * differ) to the row this instance sees at that key writes and reports nothing; an
   * upsert replacing a different row reports UPDATE (also when only the key's bytes
   * change under a collation that equates them); a delete of a missing key reports
   * nothing. Ops run one after another: a later op sees the earlier ones. On a non-OK
   * status the ops already applied stay applied (the host rolls back to its savepoint).
   * NULL slot: the module is not a backing host. */
  qrs_status (*apply_maintenance)(void* self, const qrs_maintenance_op* ops, uint32_t count,
                                  qrs_change_sink* sink, qrs_error* err);
  /* 1.5, backing host: atomically replaces the table's COMMITTED contents with the rows of
   * `rows` (create-fill and REFRESH). Pending writes of this instance's open transaction,
   * if any, are discarded. Two rows at one key (under the key's collations): QRS_CONSTRAINT,
   * with a message naming the key, and nothing changed. A concurrent reader sees the old
   * contents or the new, never a mix. Inside a schema-change scope (schema_begin) the
   * replacement is part of the scope's atomic unit. NULL slot: not a backing host. */
  qrs_status (*replace_contents)(void* self, qrs_row_source* rows, qrs_error* err);
} qrs_table_vtable;

typedef struct qrs_table {
  void* self;
  const qrs_table_vtable* vt;
} qrs_table;

/* Capabilities a module declares; read once. Defaults are the zero values. */
typedef struct qrs_module_capabilities {
  uint32_t struct_size;
  uint8_t persistent;               /* data survives the process */
  uint8_t scan_snapshot_isolation;  /* scans do not see writes made while they run */
  uint8_t committed_reads;          /* 1.1: honours qrs_scan_args.read_committed */
  uint8_t backing_host;             /* 1.5: its tables implement apply_maintenance and
                                     * replace_contents and may host a maintained table
                                     * (a materialized view); see qrs_maintenance_op */
  uint8_t access_forms;             /* 1.11: best_access_plan understands QRS_OP_FORM
                                     * filters (the engine offers them only then) */
  uint8_t reserved_[3];
} qrs_module_capabilities;

struct qrs_module;

/* 1.6: what a logical APPLY SCHEMA deployed (docs/lenses.md, "Module notification"): per
 * logical table, the compiled read body over the basis and, per basis relation it reads,
 * which basis columns back which logical columns. Every string and array is valid for the
 * duration of the notify_lens_deployment call only. */
typedef struct qrs_lens_column_backing {
  qrs_string basis_column;
  qrs_string logical_column;
} qrs_lens_column_backing;

typedef struct qrs_lens_relation {
  qrs_string schema_name; /* lower-case */
  qrs_string table_name;
  const qrs_lens_column_backing* columns;
  uint32_t column_count;
} qrs_lens_relation;

typedef struct qrs_lens_table {
  qrs_string logical_table;
  qrs_string get_body; /* the compiled SELECT over the basis, schema-qualified */
  const qrs_string* logical_columns; /* declaration order */
  uint32_t logical_column_count;
  const qrs_lens_relation* relations;
  uint32_t relation_count;
} qrs_lens_table;

typedef struct qrs_lens_snapshot {
  uint32_t struct_size;
  qrs_string logical_schema; /* lower-case */
  qrs_string basis_schema;   /* lower-case */
  qrs_string basis_hash;     /* a digest of the basis tables' declarations at deploy time */
  const qrs_lens_table* tables;
  uint32_t table_count;
} qrs_lens_snapshot;

/* 1.10: mapping advertisements (docs/decompositions.md): how a set of a module's basis
 * tables jointly back one logical table. The host asks with the module's own tables of one
 * basis schema, each with its WITH TAGS; the module emits every advertisement it
 * recognizes (a generic module builds them from `quereus.lens.decomp.*` tags with the
 * SDK's builder, quereus/mapping_advertisement.hpp; a dedicated one from its own
 * knowledge). The host validates what it receives at APPLY SCHEMA, before any catalog
 * change. Every string and array is borrowed for the duration of the call (tables) or of
 * the emit call (advertisements). */
typedef struct qrs_basis_table {
  uint32_t struct_size;
  const qrs_table_schema* schema;
  const qrs_option* tags; /* the table's WITH TAGS: key, scalar value */
  uint32_t tag_count;
} qrs_basis_table;

enum {
  QRS_AD_PRIMARY_STORAGE = 1,  /* drives reads and the write fan-out; at most one per table */
  QRS_AD_AUXILIARY_ACCESS = 2, /* a read-path structure the planner may route through */
  QRS_AD_KEY_LOGICAL_TUPLE = 1, /* members share the logical primary key's values */
  QRS_AD_KEY_SURROGATE = 2,     /* members share a key minted by the anchor column's DEFAULT */
  QRS_AD_MANDATORY = 1,         /* every logical row has this member's row (inner join) */
  QRS_AD_OPTIONAL = 2           /* absent when the row has no value for it (outer join) */
};

typedef struct qrs_ad_column {
  qrs_string logical_column; /* the logical column this member backs */
  qrs_string basis_column;   /* the member's column holding it */
} qrs_ad_column;

/* An entity-attribute-value member: one row per (entity, attribute) holding `value`; the
 * attribute column holds the logical column's name exactly as declared. */
typedef struct qrs_ad_pivot {
  qrs_string entity_column;
  qrs_string attribute_column;
  qrs_string value_column;
} qrs_ad_pivot;

typedef struct qrs_ad_member {
  uint32_t struct_size;
  qrs_string relation_id; /* stable and unique within the basis schema */
  qrs_string schema_name;
  qrs_string table_name;
  uint32_t presence; /* QRS_AD_MANDATORY / QRS_AD_OPTIONAL */
  const qrs_ad_column* columns; /* the logical columns it backs (for a pivot: the attributes) */
  uint32_t column_count;
  const qrs_ad_pivot* pivot; /* NULL: a columnar member */
  /* The member's shared-key columns, aligned with the logical primary key (logical tuple)
   * or with the anchor's key (surrogate). A pivot's key is its entity column. */
  const qrs_string* key_columns;
  uint32_t key_column_count;
} qrs_ad_member;

/* What an auxiliary structure answers: predicates of `forms` (open vocabulary: "equality",
 * "range", "prefix", "contains", "intersects", "knn", …) over logical `columns`. */
typedef struct qrs_ad_access {
  const qrs_string* columns;
  uint32_t column_count;
  const qrs_string* forms;
  uint32_t form_count;
} qrs_ad_access;

typedef struct qrs_mapping_advertisement {
  uint32_t struct_size;
  qrs_string id;            /* == anchor_relation_id for a primary-storage advertisement */
  qrs_string logical_table; /* matched case-insensitively */
  uint32_t role;            /* QRS_AD_PRIMARY_STORAGE / QRS_AD_AUXILIARY_ACCESS */
  qrs_string anchor_relation_id; /* the member deciding row existence */
  uint32_t key_kind;        /* QRS_AD_KEY_LOGICAL_TUPLE / QRS_AD_KEY_SURROGATE */
  const qrs_ad_member* members;
  uint32_t member_count;
  const qrs_ad_access* access;
  uint32_t access_count;
} qrs_mapping_advertisement;

typedef struct qrs_module_vtable {
  uint32_t struct_size;
  /* CREATE TABLE … USING this module: create storage and return a connected table. */
  qrs_status (*create)(void* self, const qrs_table_schema* schema, qrs_table* out, qrs_error* err);
  /* Connect to existing storage (e.g. a reopened database). */
  qrs_status (*connect)(void* self, const qrs_table_schema* schema, qrs_table* out,
                        qrs_error* err);
  /* DROP TABLE: destroy the storage of schema.table. Connected instances were released. */
  qrs_status (*destroy)(void* self, qrs_string schema_name, qrs_string table_name,
                        qrs_error* err);
  /* Fills out (host-initialized with struct_size). NULL: all defaults. */
  void (*capabilities)(void* self, qrs_module_capabilities* out);
  /* Releases the module. Called once, after every table and cursor is released. */
  void (*release)(void* self);
  /* 1.3: a per-database instance. The host calls this once for each database that uses the
   * module (its default module, or one named under databases.<name>.module_options), with
   * that mapping as `options`, and sends every create / connect / destroy / catalog call of
   * that database to the returned module, which it releases when the database closes.
   * A persistent module opens its storage here (e.g. the directory named by an option) and
   * reports a missing, locked or incompatible store as an error naming the path.
   * NULL slot, or QRS_UNSUPPORTED: this one instance serves every database. */
  qrs_status (*open_database)(void* self, qrs_string database_name, const qrs_option* options,
                              uint32_t option_count, struct qrs_module* out, qrs_error* err);
  /* 1.3: the persistent catalog of a module that stores schema (capability `persistent`).
   * The host keeps one text entry per stored object under a key it chooses (a table with its
   * indexes: "table:<schema>.<table>"; a view: "view:<schema>.<view>"), writing it after every
   * DDL statement that changes the object; `text` is empty to remove the entry. An entry is
   * durable when catalog_put returns. catalog_list emits every entry, in key order, at open;
   * `emit` returning non-OK stops the listing with that status. NULL slots, or
   * QRS_UNSUPPORTED: nothing is persisted and a reopened database starts empty. */
  qrs_status (*catalog_put)(void* self, qrs_string key, qrs_string text, qrs_error* err);
  qrs_status (*catalog_list)(void* self, void* ctx,
                             qrs_status (*emit)(void* ctx, qrs_string key, qrs_string text),
                             qrs_error* err);
  /* 1.4: the schema-change scope, for a per-database instance of a persistent module. The
   * host brackets every DDL statement (CREATE / DROP / ALTER of tables, indexes and views,
   * tag changes, each statement APPLY SCHEMA runs) with schema_begin .. schema_commit, and calls
   * schema_rollback instead of schema_commit when the statement fails. Everything the
   * module does for the host inside the scope — create, connect, destroy, alter_table,
   * catalog_put, and table writes made outside a transaction (index builds) — must become
   * durable at schema_commit as ONE atomic unit: after a crash at any moment the storage
   * shows all of it or none of it. Reads inside the scope see the scope's own writes.
   * schema_rollback leaves storage and the module's in-memory table state as they were at
   * schema_begin (table instances the host still holds keep working with their old
   * schema). Scopes do not nest (QRS_MISUSE); transactions opened on tables inside a scope
   * are not part of it (their writes commit with the transaction). When schema_commit
   * fails the module rolls its state back as after schema_rollback; storage then holds all
   * of the scope or none of it (a batch written whose sync then failed may still be there
   * after a restart), never a part.
   * NULL slots, or QRS_UNSUPPORTED from schema_begin: each call is durable on its own, and a
   * crash inside a DDL statement may leave part of it (the host logs this once). */
  qrs_status (*schema_begin)(void* self, qrs_error* err);
  qrs_status (*schema_commit)(void* self, qrs_error* err);
  void (*schema_rollback)(void* self);
  /* 1.6: a logical schema was deployed (APPLY SCHEMA of a logical schema succeeded). Called
   * once per successful logical apply, on every module of the database in registration
   * order, after the logical tables are registered and the deployment snapshot rotated;
   * `snapshot` is that deployment (an empty one when the logical schema no longer has
   * tables). A module reconciles whatever it keeps for the basis relations it backs and
   * stores in *relations_backed how many of the snapshot's relations are its tables (0 when
   * it backs none: then it should do nothing else). An error aborts the APPLY SCHEMA with
   * that error; the lens stays deployed (a later apply notifies again). Never called inside
   * a schema-change scope or a transaction. NULL slot: not notified. */
  qrs_status (*notify_lens_deployment)(void* self, const qrs_lens_snapshot* snapshot, uint32_t* relations_backed,
                                       qrs_error* err);
  /* 1.7: an online backup of a per-database instance of a persistent module. Writes into
   * `dest_dir` — a directory that does not exist or is empty — a copy of everything the
   * module keeps for this database, which the module opens as a database when its `path`
   * option names dest_dir. The copy is one committed state: every transaction and schema
   * change committed before the call is in it whole, nothing committed after is, and
   * uncommitted writes are not. Writers go on while the copy is written: the module holds
   * them only to take its snapshot, not for the copy. Until the call returns OK the copy
   * must not open as a database (a crash mid-backup leaves a directory the module refuses,
   * never a silently partial database). `progress` (may be NULL) is called from the calling
   * thread now and then with the bytes copied so far and an estimate of the total (0 when
   * unknown); a non-OK return stops the backup with that status. On any failure the module
   * removes what it wrote into dest_dir. NULL slot, or QRS_UNSUPPORTED: the module has no
   * online backup. */
  qrs_status (*backup)(void* self, qrs_string dest_dir, void* ctx,
                       qrs_status (*progress)(void* ctx, uint64_t bytes_done, uint64_t bytes_total),
                       qrs_error* err);
  /* 1.10: the mapping advertisements (above) the module recognizes over `tables`, its own
   * tables of basis schema `basis_schema`: `emit` once per advertisement (an emit
   * returning non-OK stops the call with that status). An error fails the APPLY SCHEMA
   * that asked, before any catalog change. Called at lens compile time, outside any
   * transaction; it must not call back into the engine. NULL slot, or QRS_UNSUPPORTED:
   * the module advertises nothing, and its tables map to logical ones by name only. */
  qrs_status (*mapping_advertisements)(void* self, qrs_string basis_schema, const qrs_basis_table* tables,
                                       uint32_t table_count, void* ctx,
                                       qrs_status (*emit)(void* ctx, const qrs_mapping_advertisement* ad),
                                       qrs_error* err);
  /* 1.12: replication. A per-database instance whose tables replicate between peers
   * (sync-store) answers the host's sync driver: `op` names the request, `args` is its JSON
   * object, and the module calls `reply` exactly once with its JSON answer (the text is
   * copied by the host before `reply` returns). The operations and their JSON are the
   * module's protocol with the driver (docs/sync-store.md "Engine-routed apply"): "changes"
   * (a page of outbound changes), "resolve" (inbound change sets resolved against local state
   * into the row writes the host must make, held by the module as a pending plan), "commit"
   * (the plan's metadata rides the next commit batch of this database's tables, or is
   * written alone when the host wrote nothing), "abandon" (drop the plan), "status". The
   * module may call back into nothing. An unknown `op` is QRS_NOTFOUND. NULL slot, or
   * QRS_UNSUPPORTED: the module does not replicate. */
  qrs_status (*replication)(void* self, qrs_string op, qrs_string args, void* ctx,
                            void (*reply)(void* ctx, qrs_string json), qrs_error* err);
} qrs_module_vtable;

typedef struct qrs_module {
  void* self;
  const qrs_module_vtable* vt;
} qrs_module;

/* ------------------------------------------------------------------------- */
/* Functions                                                                 */
/* ------------------------------------------------------------------------- */

/* Where a function writes its result. The host copies the value. */
typedef struct qrs_result_sink {
  uint32_t struct_size;
  void* ctx;
  void (*set)(struct qrs_result_sink* self, const qrs_value* value);
} qrs_result_sink;

enum {
  QRS_FUNC_DETERMINISTIC = 1u << 0, /* same arguments, same result, within one host */
  QRS_FUNC_REPLICABLE = 1u << 1     /* bit-identical results across peers and platforms */
};

typedef qrs_status (*qrs_scalar_fn)(void* user, const qrs_value* args, uint32_t argc,
                                    qrs_result_sink* out, qrs_error* err);

/* 1.8: how a write through a view inverts a function (docs/view-updates.md,
 * "Invertible functions"). A view column `f(base, k…)` is
 * - OPAQUE (the default, and what a plugin built before 1.8 declares): computed, read-only;
 * - PASSTHROUGH: the result is argument `invert_arg` unchanged in value (a tagging or
 *   labelling wrapper); the column is written, and inserted, as that argument;
 * - INVERSE: `inverse` names a registered scalar function g with
 *   g(v, a_1, …, a_n-1) = the value argument `invert_arg` must take for f to return v,
 *   where a_i are f's other arguments in order. At the view they must be constants; the
 *   column is then updatable (set col = v writes g(v, …) to the base column) but not
 *   insertable, like the built-in ±k inverses. g must be deterministic, and f(g(v, …), …)
 *   must equal v on the values written: the host does not check that law. */
enum {
  QRS_INVERT_OPAQUE = 0,
  QRS_INVERT_PASSTHROUGH = 1,
  QRS_INVERT_INVERSE = 2
};

typedef struct qrs_scalar_function_def {
  uint32_t struct_size;
  qrs_string name;
  int32_t num_args;      /* -1 for variadic */
  uint32_t flags;        /* QRS_FUNC_* */
  uint32_t return_type;  /* qrs_logical_type, QRS_LT_ANY when it varies */
  void* user;
  qrs_scalar_fn call;
  void (*release_user)(void* user); /* may be NULL; called when the host drops the function */
  /* 1.8 — the invertibility profile (above). A 1.7 struct ends before these: OPAQUE. */
  uint32_t invertibility; /* QRS_INVERT_* */
  int32_t invert_arg;     /* the argument the result passes through or inverts to (0-based) */
  qrs_string inverse;     /* INVERSE: the inverse function's name (registered by any plugin
                             or built in; checked when the plugin loads) */
  /* 1.11 — an access-form recognizer (docs/decompositions.md "Auxiliary access"): a WHERE
     conjunct that is a call of this function, with argument `form_column_arg` a column
     and argument `form_value_arg` free of the row, is a predicate of access form
     `access_form` over that column. The engine offers it to the column's table as a
     QRS_OP_FORM filter (value: that argument) and routes reads of a logical table
     through an auxiliary that advertises the form. Empty `access_form`: none. The call
     must be true exactly for the rows the form's filter admits. */
  qrs_string access_form;
  int32_t form_column_arg;
  int32_t form_value_arg;
} qrs_scalar_function_def;

/* Aggregates: init makes a state per group; step folds a row; final writes the
 * result and must not free the state; free_state releases it (always called).
 *
 * 1.9 — the aggregate's algebra (docs/sdk.md "Aggregate algebra"): what lets a
 * materialized view fold a write into a stored group's value instead of recomputing the
 * group. Every slot is optional; a NULL slot is a property the aggregate does not have
 * (a 1.8 struct ends before them: no algebra, its views recompute). Equivalence below is
 * "final() gives the same value". The laws:
 * - merge(user, state, other): folds `other` (a state of the same function, never freed
 *   by the call) into `state`; commutative and associative, a fresh init state is its
 *   identity, and step(a, x) ≡ merge(a, step(init, x)) — for NULL arguments too.
 * - negate(user, state): turns `state` into its group inverse: merge(a, negate(a)) ≡ a
 *   fresh state. Absent: the aggregate only tightens (min / max): a view folds inserts
 *   into it and recomputes a group a delete or update leaves.
 * - decode(user, state, stored): makes a fresh `state` behave as the state whose final()
 *   was `stored` under further merges of inserted rows (a stored NULL: the empty state).
 *   Absent: no fold (a view recomputes every group it touches). Needs merge.
 * - QRS_AGG_DECODE_EXACT in algebra_flags: decode also holds under retractions (merges of
 *   negated states). Without it a view retracts through a decoded value only when every
 *   argument column is NOT NULL and the group's count(*) shows rows remain.
 * merge, negate and decode must compare as step does, be pure and deterministic. */
enum {
  QRS_AGG_DECODE_EXACT = 1u << 0
};

typedef struct qrs_aggregate_function_def {
  uint32_t struct_size;
  qrs_string name;
  int32_t num_args;
  uint32_t flags;
  uint32_t return_type;
  void* user;
  qrs_status (*init)(void* user, void** state, qrs_error* err);
  qrs_status (*step)(void* user, void* state, const qrs_value* args, uint32_t argc, qrs_error* err);
  qrs_status (*final)(void* user, void* state, qrs_result_sink* out, qrs_error* err);
  void (*free_state)(void* user, void* state);
  void (*release_user)(void* user);
  /* 1.9 — the algebra (above); all may be NULL / 0. */
  qrs_status (*merge)(void* user, void* state, const void* other, qrs_error* err);
  qrs_status (*negate)(void* user, void* state, qrs_error* err);
  qrs_status (*decode)(void* user, void* state, const qrs_value* stored, qrs_error* err);
  uint32_t algebra_flags; /* QRS_AGG_* */
} qrs_aggregate_function_def;

enum {
  QRS_COLLATION_REPLICABLE = 1u << 0,      /* same order on every platform and version */
  QRS_COLLATION_ORDER_PRESERVING = 1u << 1 /* usable for range windows over stored keys */
};

typedef struct qrs_collation_def {
  uint32_t struct_size;
  qrs_string name;
  uint32_t flags; /* QRS_COLLATION_* */
  void* user;
  qrs_collation_compare_fn compare;
  void (*release_user)(void* user);
} qrs_collation_def;

/* ------------------------------------------------------------------------- */
/* Plugin entry                                                              */
/* ------------------------------------------------------------------------- */

typedef enum qrs_log_level {
  QRS_LOG_TRACE = 0,
  QRS_LOG_DEBUG = 1,
  QRS_LOG_INFO = 2,
  QRS_LOG_WARN = 3,
  QRS_LOG_ERROR = 4
} qrs_log_level;

/* Services the host offers to plugins. Valid for the life of the process. */
typedef struct qrs_host_api {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  qrs_string host_version;
  void* ctx;
  /* Writes to the host's log. Thread-safe. */
  void (*log)(void* ctx, uint32_t level, const char* message, size_t len);
} qrs_host_api;

/* What a plugin registers, through the registrar the host passes to the entry.
 * Registration calls copy the definition structs; `user` pointers and the
 * module's `self` become owned by the host, which calls their release slot.
 * A registration that returns non-OK takes nothing: the plugin keeps (and frees)
 * what it passed. */
typedef struct qrs_registrar {
  uint32_t struct_size;
  void* ctx;
  /* The plugin's settings from the YAML `config:` map, as key/value options. */
  const qrs_option* settings;
  uint32_t setting_count;
  qrs_status (*register_module)(void* ctx, qrs_string name, qrs_module module, qrs_error* err);
  qrs_status (*register_scalar)(void* ctx, const qrs_scalar_function_def* def, qrs_error* err);
  qrs_status (*register_aggregate)(void* ctx, const qrs_aggregate_function_def* def,
                                   qrs_error* err);
  qrs_status (*register_collation)(void* ctx, const qrs_collation_def* def, qrs_error* err);
} qrs_registrar;

/* The entry point every ABI-1 plugin exports:
 *
 *   QRS_EXPORT qrs_status qrs_plugin_entry_v1(const qrs_host_api* host,
 *                                             qrs_registrar* reg, qrs_error* err);
 *
 * Called once, after the host verified the manifest. Registers everything the
 * plugin provides. A non-OK status refuses the plugin (nothing it registered is
 * kept). */
typedef qrs_status (*qrs_plugin_entry_v1_fn)(const qrs_host_api* host, qrs_registrar* reg,
                                             qrs_error* err);

/* Every plugin also exports its manifest, the same JSON as its sidecar file
 * (<name>.plugin.json), so the host can check they agree:
 *
 *   QRS_EXPORT const char* qrs_plugin_manifest_v1(void);   // NUL-terminated, static
 */
typedef const char* (*qrs_plugin_manifest_v1_fn)(void);

#define QRS_PLUGIN_ENTRY_V1 "qrs_plugin_entry_v1"
#define QRS_PLUGIN_MANIFEST_V1 "qrs_plugin_manifest_v1"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QUEREUS_ABI_H_ */
