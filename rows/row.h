/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The row layer: every reproduction the lab plays is a row, and every row is the same kind of thing.
 *
 * A row is data (rows.c holds the one table of them): its name, its family, what it needs from the
 * kernel and the machine, and the stage it sets (DONTFORK, the fork switch, the page type...). A
 * family knows how to play a row of its kind and observe what happened (in its file, or in a
 * *_play.c linked only into the programs that play it, where it needs libibverbs or liburing), and
 * how to describe what it observed: the fields of its observations, the verdict derived from them
 * alone, the consistency checks a test holds them to, and its table (the family files). Playing a
 * row gives a record: name, family, kernel, device, observed and expected verdicts, the
 * observations, or why it could not run or was skipped. Records are printed as JSON lines
 * (record.c); demos print their tables from records, tests read records, never a table.
 */
#ifndef ROWS_ROW_H
#define ROWS_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The family registry: one line per family: its id; its name (which its records carry); the demo
 * that plays its rows (a program vm/guest.mk builds from demo/demo.c, which plays every family
 * that names it, shown by guest/demo in this order); and the machine they need: "" any guest, or
 * the vm/boot option of a machine of their own (VFIO's --iommu). A family with a machine of its
 * own plays there only, by its demo's name (guest/demo DEMO, rows_test DEMO), never among every
 * demo's rows; make demo boots it a machine of its own, and make test its test program,
 * <name>_rows_test (rows_test --machine <name>), both told by vm/registry.c. Its family file in
 * rows/ defines family_<name> and play_<name> (or its <file>_play.c does, which its demo's link
 * lines in vm/guest.mk name). The enum, the registry (families.c), the plays' declarations, the
 * demos and their families are made from this list.
 */
#define ROW_FAMILIES(X) \
	/* pindma holds a page (GUP or PIN_LONGTERM), or only mlock() */ \
	X(PINDMA, pindma, dontfork_demo, "") \
	/* a pipe holds the page (vmsplice, FOLL_GET) */ \
	X(VMSPLICE, vmsplice, consumers_demo, "") \
	/* io_uring holds it as a fixed buffer (FOLL_PIN | FOLL_LONGTERM) */ \
	X(IOURING, iouring, consumers_demo, "") \
	/* an RDMA MR on Soft-RoCE holds it (ib_umem, FOLL_PIN) */ \
	X(VERBS, verbs, verbs_demo, "") \
	/* an O_DIRECT read in flight holds it */ \
	X(ODIRECT, odirect, odirect_demo, "") \
	/* not a pin: the article's writeback commands */ \
	X(FADVISE, fadvise, fadvise_demo, "") \
	/* VFIO's type1 IOMMU maps it for a user-space driver (FOLL_PIN) */ \
	X(VFIO, vfio, vfio_demo, "--iommu") \
	/* the child's side: a worker forked after the pin touches the range (pindma holds it) */ \
	X(CHILD, child, child_demo, "")

#define ROW_FAMILY_ID(id, name, demo, machine) FAM_##id,
enum row_family_id { ROW_FAMILIES(ROW_FAMILY_ID) FAM_COUNT };
/* A set of families is a mask of 1u << id. */
_Static_assert(FAM_COUNT <= 32, "a family mask holds every family");

/* What a row needs; a need not met is "could not run", except a lab patch on a user's tree. */
#define NEED_0001	(1u << 0)	/* kernel-patches/<ver>/0001: the fadvise commands */
#define NEED_0002	(1u << 1)	/* kernel-patches/<ver>/0002: vm.fork_share_pinned */
#define NEED_PINDMA	(1u << 2)	/* /dev/pindma */
#define NEED_HUGETLB	(1u << 3)	/* a free 2 MiB hugetlb page */
#define NEED_THP	(1u << 4)	/* transparent huge pages */
#define NEED_RXE	(1u << 5)	/* Soft-RoCE (rdma_rxe) */
#define NEED_ODIRECT	(1u << 6)	/* the O_DIRECT rows' disk, serial odirect */
#define NEED_DISK	(1u << 8)	/* the guest's slow ext4 disk, /dev/vda on /mnt/disk */
#define NEED_IOURING	(1u << 9)	/* io_uring */
#define NEED_IOMMU	(1u << 10)	/* an IOMMU and vfio-pci: a guest of vm/boot --iommu */

/* The fork switch (vm.fork_share_pinned, kernel-patches/0002) while a row plays; restored after. */
enum fork_switch { SWITCH_LEAVE, SWITCH_ON, SWITCH_OFF };

/* The memory a pin row holds: private anonymous memory, or a page of MAP_SHARED anonymous. */
enum memkind { MEM_PAGE, MEM_THP, MEM_HUGETLB, MEM_SHARED };

/* The child's part once forked. */
enum child_part {
	CHILD_LIVES,		/* stays alive across the parent's write and the device's transfers */
	CHILD_EXITS,		/* exits before the parent writes */
	CHILD_READS_DEVICE,	/* stays, and reads where the device wrote after the fork */
};

/* fadvise rows: what is asked of 8 MiB of dirty file pages. */
enum fadvise_how { FADV_ASYNC_WRITE, FADV_WRITE_WAIT, FADV_WAIT_WRITE_WAIT, FADV_SYNC_FILE_RANGE,
		   FADV_MSYNC_ASYNC, FADV_NOTHING };

/* verbs rows: an HCA row, or one of what rdma-core's fork support costs. */
enum verbs_kind { VERBS_HCA, VERBS_SUBPAGE_MR, VERBS_FORK_INIT_AFTER_REG, VERBS_FREE_BEFORE_DEREG,
		  VERBS_MR_SPLITS_VMAS, VERBS_HUGETLB_MR };

struct row {
	const char *name;	/* unique; the expectation tables and --only use it */
	enum row_family_id family;
	const char *title;	/* one line: the stage */
	const char *note;	/* why the verdict is what it is */
	unsigned int needs;	/* NEED_* */
	enum fork_switch fork_switch;
	bool dontfork;		/* MADV_DONTFORK on the range before the fork */
	bool dofork;		/* then MADV_DOFORK, still before the fork */
	bool wipeonfork;	/* MADV_WIPEONFORK on the range before the fork */
	bool fork;		/* fork at all (the control rows do not) */
	enum child_part child;
	enum memkind mem;
	bool picture;		/* the demo draws the article's three pictures for it */
	union {
		struct {
			uint32_t mode;	/* PINDMA_MODE_*, 0: mlock() only */
			/*
			 * After the fork the parent does not write: it pins the page again,
			 * without WRITE (a read-only FOLL_PIN, as a read-only ibv_reg_mr() or
			 * an io_uring buffer registration makes).
			 */
			bool repin_ro;
		} pindma;
		struct {
			bool own_page;	/* the read fills whole pages; the parent writes another */
			bool ext4;	/* through a file on ext4 rather than the raw disk */
			bool multi;	/* the 2009 form: readers sharing pages, forks between */
			/*
			 * multi: how far past a page boundary the readers' buffer starts, in
			 * bytes (LTP's dma_thread_diotest -a); 0, page-aligned: the control
			 */
			uint16_t offset;
		} odirect;
		struct {
			enum fadvise_how how;
		} fadvise;
		struct {
			enum verbs_kind kind;
			bool fork_init;		/* ibv_fork_init() */
			bool fork_safe_env;	/* RDMAV_FORK_SAFE=1 */
			bool hugepages_safe_env; /* RDMAV_HUGEPAGES_SAFE=1 */
			bool no_init;		/* kind MR_SPLITS_VMAS without fork support */
		} verbs;
	};
};

extern const struct row rows[];
extern const unsigned int n_rows;
const struct row *row_find(const char *name);

/* Per step of a pin row: the page state the kernel reports for each party's page (pindma debugfs). */
enum step { STEP_BEFORE_FORK, STEP_AFTER_FORK, STEP_AFTER_WRITE, STEP_AFTER_DEVICE, NSTEPS };
enum party { PARTY_DEVICE, PARTY_PARENT, PARTY_CHILD, NPARTIES };

struct page_state {
	bool valid;		/* read; false: no page there, or not read */
	uint64_t pfn;
	int64_t refcount;
	/* -1 for the one the kernel does not keep: 6.1 keeps the page's, 6.12 the folio's */
	int64_t page_mapcount;
	int64_t folio_mapcount;
	int64_t pincount;	/* -1 where the kernel keeps none (small folios) */
	bool maybe_pinned;
	bool anon_exclusive;
};

/* One copy the kernel made, from its own tracing (why.c). */
struct copy {
	char at[16];		/* "fork", "write-fault", "unshare" */
	char for_whom[8];	/* "child", "parent" */
	char by[48];		/* the kernel function the trace names */
	uint64_t old_pfn, new_pfn;
};
#define MAX_COPIES 8

/*
 * What a record observed: its family's own struct (struct <name>_obs, in the family's file, or in
 * its header where a play file shares it), kept here as bytes. The row layer reads them only
 * through the family's field table (OBS_FIELD); the family's code through ROW_OBS(rec, struct
 * <name>_obs).
 */
#define OBS_SIZE 256
/* 0, once the compiler has checked that a family's struct fits (every use below asks). */
#define OBS_FITS(type) (0 * sizeof(struct { \
	_Static_assert(sizeof(type) <= OBS_SIZE, #type " fits OBS_SIZE"); \
	_Static_assert(_Alignof(type) <= _Alignof(max_align_t), #type " is aligned"); int fits; }))
/* The family's view of rec's observations, as const as rec. */
#define ROW_OBS(rec, type) _Generic((rec), \
	const struct record *: (const type *)(const void *)((rec)->obs + OBS_FITS(type)), \
	struct record *: (type *)(void *)((rec)->obs + OBS_FITS(type)))

enum record_status { REC_OK, REC_MISMATCH, REC_COULD_NOT_RUN, REC_SKIPPED };

/* A record's reason, and a verdict's why (which a reason quotes after a prefix of its own). */
#define REASON_LEN 320
#define WHY_LEN 240

struct record {
	const struct row *row;
	char program[24];	/* the demo that played it */
	char kernel[64];	/* uname -r */
	char table[16];		/* the expectation table used */
	/*
	 * What held the page: the family's device (pipe, io_uring, disk, rxe, vfio-edu...), or for a
	 * pindma row the engine that pindma was asked to serve its DMA with (cpu, edu)
	 */
	char device[12];
	enum record_status status;
	char observed[16];	/* the verdict derived from the observations; "": none */
	char expected[16];	/* from the table of this kernel; "": no expectation */
	char reason[REASON_LEN];	/* could not run / skipped: why; mismatch: what differs */
	union {
		unsigned char obs[OBS_SIZE];	/* the family's struct <name>_obs */
		max_align_t obs_align;		/* aligned for any of them */
	};
	bool why;		/* page_state and copies were recorded */
	struct page_state page_state[NSTEPS][NPARTIES];
	struct copy copies[MAX_COPIES];
	unsigned int n_copies;
	unsigned int why_lacks;	/* WHY_LACKS_*: what of the kernel's view is missing */
	char why_note[320];	/* what could not be traced, said instead of guessed */
};

/* What a record played for its "why" could not get from the kernel (why.c). */
#define WHY_LACKS_STATE		(1u << 0)	/* the page state, at some step */
#define WHY_LACKS_COPIES	(1u << 1)	/* the copies (no tracing, or its trace unread) */
#define WHY_LACKS_HUGETLB_POOL	(1u << 2)	/* the hugetlb pool's allocations (no kprobe) */
#define WHY_LACKS_COUNT		3		/* record.c names each */

/* A consistency check of a record's observations against its verdict and stage (rows_test). */
struct check {
	char what[120];
	bool ok;
	char detail[160];
};
#define MAX_CHECKS 32
/* In a family's checks(): one more check, c[k], true when cond holds. */
#define CHECK(cond, ...) do { \
	snprintf(c[k].what, sizeof(c[k].what), __VA_ARGS__); \
	c[k].ok = (cond); \
	k++; \
} while (0)

/* One observation: its name in records, its type, where it lives in struct record. */
enum field_type { F_U64, F_I64, F_U32, F_BOOL, F_STR };
struct field {
	const char *name;
	enum field_type type;
	size_t off;
	size_t size;
};
/*
 * The field type of an lvalue, by its C type (its address's, so that an array of char is one and a
 * char pointer, whose bytes are no text, is not); -1 for none of them.
 */
#define FIELD_TYPE_OF(x) _Generic(&(x), uint64_t *: F_U64, int64_t *: F_I64, uint32_t *: F_U32, \
	bool *: F_BOOL, char (*)[sizeof(x)]: F_STR, default: -1)
/* 0, once the compiler has checked that MEMBER of struct TAG is of field type TYPE. */
#define OBS_TYPED(tag, type, member) (0 * sizeof(struct { \
	_Static_assert(FIELD_TYPE_OF(((struct tag *)0)->member) == (type), \
		       #tag "." #member " is " #type); int typed; }))
/* MEMBER of struct TAG, as the field NAME of type TYPE (checked). */
#define STRUCT_FIELD(tag, name, type, member) \
	{ name, type, offsetof(struct tag, member) + OBS_TYPED(tag, type, member), \
	  sizeof(((struct tag *)0)->member) }
/* MEMBER of a family's observations, struct TAG (its records' field MEMBER). */
#define OBS_FIELD(tag, type, member) \
	{ #member, type, offsetof(struct record, obs) + offsetof(struct tag, member) + \
	  OBS_FITS(struct tag) + OBS_TYPED(tag, type, member), sizeof(((struct tag *)0)->member) }

/* How a row is played: pindma's engine asked (auto, cpu, edu), and whether the "why" is kept. */
struct play_opts {
	const char *engine;
	bool why;
};

/*
 * Playing is each family's play_<name>(), in its file or its rows/<name>_play.c (which a program
 * links when it plays it). A play fills the record's observations and returns 0, or -1 with
 * rec->reason set (could not run).
 */
typedef int row_play_fn(const struct row *r, const struct play_opts *o, struct record *rec);

/*
 * A family: everything the lab knows of it, in its own file (rows/<name>.c), listed once in
 * ROW_FAMILIES. The row layer asks only this, never the family's id.
 */
struct row_family {
	const char *name;
	/*
	 * What its demo shows of it, in the demo's heading (guest/demo: "DEMO: TITLE and TITLE");
	 * NULL: the heading is the demo's command line.
	 */
	const char *title;
	/* The device its records name (what holds the page); NULL: pindma's engine asked. */
	const char *device;
	/* Its observations, ending in { NULL }: records are written and read from this alone. */
	const struct field *fields;
	/*
	 * Its play, NULL in a program that does not link it (a weak reference: verbs' needs
	 * libibverbs, io_uring's liburing).
	 */
	row_play_fn *play;
	/*
	 * Its rows act on what the fork switch changes even without forking (verbs: RDMA netlink
	 * reports it to rdma-core), so they play under the switch's lock.
	 */
	bool reads_switch;
	/* The verdict from the observations alone; NULL (and *why) when they prove neither. */
	const char *(*verdict)(const struct record *rec, char *why, size_t n);
	/* What the observations must show for the verdict and stage; returns the number of checks. */
	unsigned int (*checks)(const struct record *rec, struct check *c);
	/* The family's table: a header, then one line per record. */
	void (*table_header)(FILE *f);
	void (*table_line)(FILE *f, unsigned int i, const struct record *rec);
	/* Optional: the article's pictures of a row that asks for them (row->picture). */
	void (*picture)(FILE *f, const struct record *rec);
	/*
	 * Optional: the kernel's own view of a row (why.c records it unless --no-why, why_print.c
	 * says it), printed alone by --why NAME.
	 */
	void (*why)(FILE *f, const struct record *rec);
	/* Optional: a program's second life, `PROGRAM --row-child NAME`, for plays that re-exec. */
	int (*row_child)(const char *name);
	/*
	 * A family with a machine of its own (its ROW_FAMILIES line names one): what a machine
	 * lacks for its rows, or NULL. Its test program (<name>_rows_test) skips, saying so, on a
	 * machine that lacks it, such as a test farm's one boot of the whole suite.
	 */
	const char *(*lacks_machine)(void);
};

extern const struct row_family *const families[FAM_COUNT];
/* Each family's demo and machine ("": any), as its ROW_FAMILIES line gives them. */
extern const char *const family_demo[FAM_COUNT];
extern const char *const family_machine[FAM_COUNT];
/* The families a demo plays: those whose line names it. */
unsigned int families_of_demo(const char *demo);

/*
 * Each family's play. A family file whose play is a file of its own refers to it weakly (#pragma
 * weak), so that it is NULL in a program that does not link that file; the definitions stay strong.
 */
#define ROW_FAMILY_PLAY(id, name, demo, machine) extern row_play_fn play_##name;
ROW_FAMILIES(ROW_FAMILY_PLAY)

/* play.c: needs, the switch and its lock, the family's play, the verdict and the expectation. */
void row_play(const struct row *r, const struct play_opts *o, struct record *rec);
struct lab_child;
/*
 * A play's child at its end: told cmd (unless cmd < 0), reaped, and it must have exited with want;
 * 0, or -1 with rec->reason saying how it ended instead.
 */
int row_child_end(struct record *rec, struct lab_child *c, int cmd, int want);
/* Set rec->reason (printf-style, with strerror(errno) appended when errno is set); returns -1. */
int row_fail(struct record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set the record's status from its observed and expected verdicts. */
void record_judge(struct record *rec);
/* A status's token in records ("could-not-run"), and its words in a table ("could not run"). */
const char *record_status_name(enum record_status s);
const char *record_status_words(enum record_status s);
/* A demo's exit status for a record: 0 as expected (or skipped), 1 mismatched, 2 could not run. */
int record_exit_status(const struct record *rec);
const char *row_family_name(enum row_family_id f);

/* record.c: records as JSON lines (json-c). */
void record_print_json(FILE *f, const struct record *rec);
/* Parse one JSON line into rec; 0, or -1 with rec->reason saying why. */
int record_parse_json(const char *line, struct record *rec);

/* expect.c: the expectation tables and the rules of each kernel's era. */
const char *expect_verdict(const char *row);
const char *expect_table_name(void);
const char *kernel_release(void);
/* The rules the "why" sentences follow for this kernel's era (see expect.c). */
struct era_rules {
	const char *fork_copies_pinned;	/* how fork treats a maybe-pinned anon page */
	const char *write_fault_reuse;	/* when a write fault reuses a page rather than copying */
	const char *hugetlb_reuse;	/* the same for hugetlb */
	const char *unshare;		/* what a read-only FOLL_PIN does to a shared anon page */
	/*
	 * Where the kernel makes the copies (why.c reads them in its stack traces), most specific
	 * first, blank-separated: at fork, and at a write fault or GUP's COW break or unshare; and
	 * the function that takes a hugetlb page from the pool (a kprobe: no mm_page_alloc there).
	 */
	const char *fork_copy_fns;
	const char *fault_copy_fns;
	const char *hugetlb_alloc_fn;
};
const struct era_rules *expect_rules(void);
/* The tables this build knows, by registry name, oldest first, blank-separated. */
void expect_tables(char *out, size_t n);

/*
 * The engines the rows of a family without a device of its own (pindma) are played with, a run of
 * its demo each (guest/demo), besides "auto" (main.c).
 */
#define ROW_ENGINES 2
extern const char *const row_engines[ROW_ENGINES];

/* main.c: the demos' shared main: --only, --json, --records FILE, --render FILE, --engine. */
int rows_main(int argc, char **argv, const char *program);

#endif
