// SPDX-License-Identifier: GPL-2.0
/*
 * Records as JSON lines, written and read with json-c (Debian's libjson-c-dev, linked static). Each
 * family's observations are listed once, as a field table in its family file, and both directions
 * walk it, so what a demo prints and what a test reads back cannot drift apart.
 */
#include <json-c/json.h>
#include <stddef.h>
#include <string.h>

#include "row.h"

static const struct field state_fields[] = {
	STRUCT_FIELD(page_state, "pfn", F_U64, pfn),
	STRUCT_FIELD(page_state, "refcount", F_I64, refcount),
	STRUCT_FIELD(page_state, "page_mapcount", F_I64, page_mapcount),
	STRUCT_FIELD(page_state, "folio_mapcount", F_I64, folio_mapcount),
	STRUCT_FIELD(page_state, "pincount", F_I64, pincount),
	STRUCT_FIELD(page_state, "maybe_pinned", F_BOOL, maybe_pinned),
	STRUCT_FIELD(page_state, "anon_exclusive", F_BOOL, anon_exclusive),
	{ NULL },
};

static const struct field copy_fields[] = {
	STRUCT_FIELD(copy, "at", F_STR, at),
	STRUCT_FIELD(copy, "for", F_STR, for_whom),
	STRUCT_FIELD(copy, "by", F_STR, by),
	STRUCT_FIELD(copy, "old_pfn", F_U64, old_pfn),
	STRUCT_FIELD(copy, "new_pfn", F_U64, new_pfn),
	{ NULL },
};

static const char *const step_names[NSTEPS] = {
	"before-fork", "after-fork", "after-write", "after-device",
};
static const char *const party_names[NPARTIES] = { "device", "parent", "child" };
/* Each status's token in records, and its words in a demo's table. */
static const struct {
	const char *token, *words;
} statuses[] = {
	[REC_OK] = { "ok", "as expected" },
	[REC_MISMATCH] = { "mismatch", "mismatch" },
	[REC_COULD_NOT_RUN] = { "could-not-run", "could not run" },
	[REC_SKIPPED] = { "skipped", "skipped" },
};
static const char *const why_lack_names[] = { "page-state", "copies", "hugetlb-pool" };
#define N_WHY_LACKS (sizeof(why_lack_names) / sizeof(why_lack_names[0]))
/* A bit without a name would be dropped from the record, and its lack not seen. */
_Static_assert(N_WHY_LACKS == WHY_LACKS_COUNT, "every WHY_LACKS_ bit has its name");

const char *record_status_name(enum record_status s)
{
	return statuses[s].token;
}

const char *record_status_words(enum record_status s)
{
	return statuses[s].words;
}

int record_exit_status(const struct record *rec)
{
	return rec->status == REC_COULD_NOT_RUN ? 2 : rec->status == REC_MISMATCH ? 1 : 0;
}

const char *row_family_name(enum row_family_id f)
{
	return families[f]->name;
}

static json_object *fields_to_json(const void *base, const struct field *f)
{
	json_object *o = json_object_new_object();

	for (; f->name; f++) {
		const char *p = (const char *)base + f->off;
		json_object *v;

		switch (f->type) {
		case F_U64:
			v = json_object_new_uint64(*(const uint64_t *)p);
			break;
		case F_I64:
			v = json_object_new_int64(*(const int64_t *)p);
			break;
		case F_U32:
			v = json_object_new_int64(*(const uint32_t *)p);
			break;
		case F_BOOL:
			v = json_object_new_boolean(*(const bool *)p);
			break;
		default:
			v = json_object_new_string(p);
			break;
		}
		json_object_object_add(o, f->name, v);
	}
	return o;
}

/* Every field must be there, with its type: a record missing one was not written by this code. */
static int fields_from_json(void *base, const struct field *f, json_object *o, const char **missing)
{
	for (; f->name; f++) {
		char *p = (char *)base + f->off;
		json_object *v;

		if (!json_object_object_get_ex(o, f->name, &v)) {
			*missing = f->name;
			return -1;
		}
		switch (f->type) {
		case F_U64:
			*(uint64_t *)p = json_object_get_uint64(v);
			break;
		case F_I64:
			*(int64_t *)p = json_object_get_int64(v);
			break;
		case F_U32:
			*(uint32_t *)p = (uint32_t)json_object_get_int64(v);
			break;
		case F_BOOL:
			*(bool *)p = json_object_get_boolean(v);
			break;
		default:
			snprintf(p, f->size, "%s", json_object_get_string(v));
			break;
		}
	}
	return 0;
}

static json_object *str_or_null(const char *s)
{
	return s[0] ? json_object_new_string(s) : NULL;
}

void record_print_json(FILE *f, const struct record *rec)
{
	json_object *o = json_object_new_object(), *ps, *copies, *lacks;

	json_object_object_add(o, "row", json_object_new_string(rec->row->name));
	json_object_object_add(o, "family", json_object_new_string(row_family_name(rec->row->family)));
	json_object_object_add(o, "program", json_object_new_string(rec->program));
	json_object_object_add(o, "kernel", json_object_new_string(rec->kernel));
	json_object_object_add(o, "table", json_object_new_string(rec->table));
	json_object_object_add(o, "device", json_object_new_string(rec->device));
	json_object_object_add(o, "status", json_object_new_string(statuses[rec->status].token));
	json_object_object_add(o, "observed", str_or_null(rec->observed));
	json_object_object_add(o, "expected", str_or_null(rec->expected));
	json_object_object_add(o, "reason", json_object_new_string(rec->reason));
	json_object_object_add(o, "observations",
			       fields_to_json(rec, families[rec->row->family]->fields));
	if (rec->why) {
		ps = json_object_new_object();
		for (int s = 0; s < NSTEPS; s++) {
			json_object *step = json_object_new_object();

			for (int p = 0; p < NPARTIES; p++)
				json_object_object_add(step, party_names[p],
						       rec->page_state[s][p].valid ?
						       fields_to_json(&rec->page_state[s][p],
								      state_fields) : NULL);
			json_object_object_add(ps, step_names[s], step);
		}
		json_object_object_add(o, "page_state", ps);
		copies = json_object_new_array();
		for (unsigned int i = 0; i < rec->n_copies; i++)
			json_object_array_add(copies, fields_to_json(&rec->copies[i], copy_fields));
		json_object_object_add(o, "copies", copies);
		lacks = json_object_new_array();
		for (unsigned int i = 0; i < N_WHY_LACKS; i++)
			if (rec->why_lacks & (1u << i))
				json_object_array_add(lacks, json_object_new_string(why_lack_names[i]));
		json_object_object_add(o, "why_lacks", lacks);
		json_object_object_add(o, "why_note", json_object_new_string(rec->why_note));
	}
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(f);
	json_object_put(o);
}

static int get_str(json_object *o, const char *key, char *out, size_t n, bool nullable)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -1;
	if (!v) {
		out[0] = 0;
		return nullable ? 0 : -1;
	}
	snprintf(out, n, "%s", json_object_get_string(v));
	return 0;
}

int record_parse_json(const char *line, struct record *rec)
{
	json_object *o = json_tokener_parse(line), *obs, *ps, *copies, *lacks;
	char name[64], family[16], status[16];
	const char *missing = NULL;
	int ret = -1, st = -1;

	memset(rec, 0, sizeof(*rec));
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(rec->reason, sizeof(rec->reason), "not a JSON object");
		goto out;
	}
	if (get_str(o, "row", name, sizeof(name), false) ||
	    get_str(o, "family", family, sizeof(family), false) ||
	    get_str(o, "status", status, sizeof(status), false) ||
	    get_str(o, "program", rec->program, sizeof(rec->program), false) ||
	    get_str(o, "kernel", rec->kernel, sizeof(rec->kernel), false) ||
	    get_str(o, "table", rec->table, sizeof(rec->table), false) ||
	    get_str(o, "device", rec->device, sizeof(rec->device), false) ||
	    get_str(o, "observed", rec->observed, sizeof(rec->observed), true) ||
	    get_str(o, "expected", rec->expected, sizeof(rec->expected), true) ||
	    get_str(o, "reason", rec->reason, sizeof(rec->reason), false)) {
		snprintf(rec->reason, sizeof(rec->reason), "a record field is missing");
		goto out;
	}
	rec->row = row_find(name);
	if (!rec->row || strcmp(family, row_family_name(rec->row->family))) {
		snprintf(rec->reason, sizeof(rec->reason), "no row %s of family %s", name, family);
		goto out;
	}
	for (int i = REC_OK; i <= REC_SKIPPED; i++)
		if (!strcmp(status, statuses[i].token))
			st = i;
	if (st < 0) {
		snprintf(rec->reason, sizeof(rec->reason), "unknown status %s", status);
		goto out;
	}
	rec->status = st;
	if (!json_object_object_get_ex(o, "observations", &obs) ||
	    fields_from_json(rec, families[rec->row->family]->fields, obs, &missing)) {
		snprintf(rec->reason, sizeof(rec->reason), "observation %s missing",
			 missing ? missing : "object");
		goto out;
	}
	if (json_object_object_get_ex(o, "page_state", &ps)) {
		rec->why = true;
		for (int s = 0; s < NSTEPS; s++) {
			json_object *step, *party;

			if (!json_object_object_get_ex(ps, step_names[s], &step))
				goto bad_why;
			for (int p = 0; p < NPARTIES; p++) {
				if (!json_object_object_get_ex(step, party_names[p], &party))
					goto bad_why;
				if (!party)
					continue;
				if (fields_from_json(&rec->page_state[s][p], state_fields, party,
						     &missing))
					goto bad_why;
				rec->page_state[s][p].valid = true;
			}
		}
		if (!json_object_object_get_ex(o, "copies", &copies) ||
		    !json_object_is_type(copies, json_type_array))
			goto bad_why;
		for (size_t i = 0; i < json_object_array_length(copies) && i < MAX_COPIES; i++) {
			if (fields_from_json(&rec->copies[i], copy_fields,
					     json_object_array_get_idx(copies, i), &missing))
				goto bad_why;
			rec->n_copies++;
		}
		if (!json_object_object_get_ex(o, "why_lacks", &lacks) ||
		    !json_object_is_type(lacks, json_type_array))
			goto bad_why;
		for (size_t i = 0; i < json_object_array_length(lacks); i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(lacks, i));
			unsigned int k;

			for (k = 0; k < N_WHY_LACKS && strcmp(name ? name : "", why_lack_names[k]); k++)
				;
			if (k == N_WHY_LACKS)
				goto bad_why;
			rec->why_lacks |= 1u << k;
		}
		get_str(o, "why_note", rec->why_note, sizeof(rec->why_note), false);
	}
	ret = 0;
	goto out;
bad_why:
	snprintf(rec->reason, sizeof(rec->reason), "page_state, copies or why_lacks malformed");
out:
	json_object_put(o);
	return ret;
}
