/*
 * test_report_symbols.c - opreport's symbol layer: symbol-table bounds and
 * lookup, the kallsyms snapshot (kernel and module key spaces), perf maps
 * for anon regions, libbfd symbols of this very test binary (file offset ->
 * symbol -> vma, cross-checked with <elf.h>) and demangling modes.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_demangle.h"
#include "opreport.h"

/*
 * libbfd 2.40 keeps one DWARF line-table buffer past bfd_close() (allocated
 * in bfd_find_nearest_line); that leak is libbfd's, not ours. LeakSanitizer
 * asks the program for suppressions through this hook.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libbfd-2.40\n";
}

__attribute__((noipa)) int report_test_marker(int x)
{
	return x * 3 + 1;
}

static void push(struct rpt_symtab *t, uint64_t start, uint64_t end, const char *name)
{
	t->v = realloc(t->v, (t->n + 1) * sizeof(*t->v));
	assert_non_null(t->v);
	t->v[t->n++] = (struct rpt_sym){ .start = start, .end = end, .vma = start,
					 .name = symtab_strdup(t, name) };
}

static void test_symtab_bounds(void **state)
{
	struct rpt_symtab t = { 0 };

	(void)state;
	push(&t, 0x300, 0, "c");
	push(&t, 0x100, 0, "a");
	push(&t, 0x200, 0x240, "b");
	push(&t, 0x100, 0, "a_alias");
	symtab_finish(&t);
	assert_int_equal(t.n, 3);
	assert_null(sym_lookup(&t, 0xff));
	assert_string_equal(sym_lookup(&t, 0x100)->name, "a");
	assert_string_equal(sym_lookup(&t, 0x1ff)->name, "a"); /* bounded by the next */
	assert_string_equal(sym_lookup(&t, 0x23f)->name, "b");
	assert_null(sym_lookup(&t, 0x240)); /* beyond b's own end */
	assert_string_equal(sym_lookup(&t, 0x300)->name, "c");
	assert_int_equal(sym_key_vma(&t, 0x10), 0x10);
	symtab_free(&t);
}

/* an image without any symbol: an empty table (no array) is finished and looked up safely */
static void test_symtab_empty(void **state)
{
	struct rpt_symtab t = { 0 };

	(void)state;
	symtab_finish(&t); /* qsort(NULL, 0): UBSan's nonnull check failed before */
	assert_int_equal(t.n, 0);
	assert_null(sym_lookup(&t, 0x1000));
	symtab_free(&t);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("report_symbols_XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* @path opened for reading (the loaders take and close an fd) */
static int rd(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static void test_kallsyms(void **state)
{
	char *ks = write_tmp("ffffffff81000000 T _text\n"
			     "ffffffff81000100 T start_kernel\n"
			     "ffffffff81000200 t local_fn\n"
			     "ffffffff81000300 D some_data\n"
			     "garbage line\n"
			     "ffffffff81000400 T _etext\n"
			     "ffffffffc0001000 t mod_init\t[mymod]\n"
			     "ffffffffc0001080 t mod_work\t[mymod]\n");
	char *mods = write_tmp("mymod 16384 0 - Live 0xffffffffc0000000\n");
	struct rpt_symtab t = { 0 };
	char err[512];

	(void)state;
	assert_int_equal(ksym_load_kernel(&t, rd(ks), ks, NULL, -1, err, sizeof(err)), 0);
	/* keys are pc - _text; data symbols are not text */
	assert_string_equal(sym_lookup(&t, 0x150)->name, "start_kernel");
	assert_string_equal(sym_lookup(&t, 0x3ff)->name, "local_fn");
	assert_int_equal(sym_key_vma(&t, 0x150), 0xffffffff81000150ull);
	assert_int_equal(sym_lookup(&t, 0x150)->vma, 0xffffffff81000100ull);
	symtab_free(&t);

	assert_int_equal(ksym_load_kernel(&t, rd(ks), ks, "mymod", rd(mods), err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(sym_lookup(&t, 0x1090)->name, "mod_work"); /* pc - module base */
	assert_null(sym_lookup(&t, 0x10));
	symtab_free(&t);
	/* a module the snapshot does not know: an error naming it */
	assert_int_equal(ksym_load_kernel(&t, rd(ks), ks, "nosuchmod", rd(mods), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nosuchmod"));
	symtab_free(&t);

	/* no snapshot to read: an error naming it */
	assert_int_equal(ksym_load_kernel(&t, -1, "/nonexistent/kallsyms", NULL, -1, err, sizeof(err)),
			 -EBADF);
	assert_non_null(strstr(err, "/nonexistent/kallsyms"));
	unlink(ks);
	unlink(mods);
	free(ks);
	free(mods);
	ks = write_tmp("0000000000000000 T _text\n0000000000000000 T start_kernel\n");
	assert_int_equal(ksym_load_kernel(&t, rd(ks), ks, NULL, -1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "zero"));
	symtab_free(&t);
	unlink(ks);
	free(ks);
}

/*
 * The snapshot read as the daemon reads kallsyms (lib/op_ksyms): weak
 * functions of modules ('w') are functions, pseudo-module code ([bpf],
 * [__builtin__ftrace]) lies in the kernel's key space (pc - _text), the
 * key origin falls back to _stext, zero addresses are not placed, a line
 * that is not a kallsyms line (no closing bracket) is not read, and a long
 * name is kept whole.
 */
static void test_kallsyms_daemon_rules(void **state)
{
	char longname[701], text[2048], *ks, *mods;
	struct rpt_symtab t = { 0 };
	char err[512];

	(void)state;
	memset(longname, 'L', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_true(snprintf(text, sizeof(text),
			     "ffffffff81000100 T _stext\n"
			     "ffffffff81000200 T start_kernel\n"
			     "0000000000000000 T hidden_fn\n"
			     "ffffffff81000300 t %s\n"
			     "ffffffff81000400 T _etext\n"
			     "ffffffffc0001000 t mod_init\t[mymod]\n"
			     "ffffffffc0001100 w mod_weak\t[mymod]\n"
			     "ffffffffc0001200 v mod_weak_object\t[mymod]\n"
			     "ffffffffc0001300 t mod_torn\t[mymod\n"
			     "ffffffffc0200000 t ftrace_trampoline\t[__builtin__ftrace]\n"
			     "ffffffffc0300000 t bpf_prog_6deef7357e7b4530_probe\t[bpf]\n",
			     longname) < (int)sizeof(text));
	ks = write_tmp(text);
	mods = write_tmp("mymod 16384 0 - Live 0xffffffffc0000000\n");

	assert_int_equal(ksym_load_kernel(&t, rd(ks), ks, NULL, -1, err, sizeof(err)), 0);
	/* keys are pc - _stext without _text */
	assert_int_equal(t.vma_bias, 0xffffffff81000100ull);
	assert_string_equal(sym_lookup(&t, 0x100)->name, "start_kernel");
	assert_string_equal(sym_lookup(&t, 0x200)->name, longname);
	/* pseudo-module code is the kernel's: named through the kernel image */
	assert_string_equal(sym_lookup(&t, 0xffffffffc0200010ull - 0xffffffff81000100ull)->name,
			    "ftrace_trampoline");
	assert_string_equal(sym_lookup(&t, 0xffffffffc0300040ull - 0xffffffff81000100ull)->name,
			    "bpf_prog_6deef7357e7b4530_probe");
	/* the zero-address symbol is nowhere */
	for (size_t i = 0; i < t.n; i++)
		assert_string_not_equal(t.v[i].name, "hidden_fn");
	symtab_free(&t);

	assert_int_equal(ksym_load_kernel(&t, rd(ks), ks, "mymod", rd(mods), err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(sym_lookup(&t, 0x1010)->name, "mod_init");
	assert_string_equal(sym_lookup(&t, 0x1110)->name, "mod_weak");
	symtab_free(&t);

	unlink(ks);
	unlink(mods);
	free(ks);
	free(mods);
}

static void test_perfmap(void **state)
{
	char *map = write_tmp("7f0000001000 40 jit_fn_a\n"
			      "7f0000001040 20 Lcom/x/Y;->run()V\n"
			      "bogus\n"
			      "10 10 below_start\n");
	struct rpt_symtab t = { 0 };
	char err[512];

	(void)state;
	assert_int_equal(ksym_load_perfmap(&t, rd(map), map, 0x7f0000000000ull, err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(sym_lookup(&t, 0x1010)->name, "jit_fn_a");
	assert_string_equal(sym_lookup(&t, 0x1050)->name, "Lcom/x/Y;->run()V");
	assert_null(sym_lookup(&t, 0x1060)); /* size from the map */
	assert_int_equal(sym_key_vma(&t, 0x1010), 0x7f0000001010ull);
	symtab_free(&t);
	unlink(map);
	free(map);
}

/* which perf maps are believed: perf's ownership rule, no links, no FIFOs */
static void test_perfmap_trust(void **state)
{
	char *map = write_tmp("7f0000001000 40 jit_fn_a\n");
	char link[64], fifo[64], err[512];
	int fd;

	(void)state;
	/* a map of the user running the test (root: a root-owned 0644 one) */
	assert_int_equal(chmod(map, 0644), 0);
	fd = ksym_open_perfmap(map, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ksym_open_perfmap("/nonexistent/perf-1.map", err, sizeof(err)), -ENOENT);
	/* never through a symbolic link */
	snprintf(link, sizeof(link), "%s.link", map);
	assert_int_equal(symlink(map, link), 0);
	assert_int_equal(ksym_open_perfmap(link, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	unlink(link);
	/* a FIFO without a writer: refused at once, not waited on */
	snprintf(fifo, sizeof(fifo), "%s.fifo", map);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(ksym_open_perfmap(fifo, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FIFO"));
	unlink(fifo);
	if (geteuid() == 0) {
		/* root: not a user's map, not a world-writable root one */
		assert_int_equal(chown(map, 65534, 65534), 0);
		assert_int_equal(ksym_open_perfmap(map, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "uid 65534"));
		assert_int_equal(chown(map, 0, 0), 0);
		assert_int_equal(chmod(map, 0666), 0);
		assert_int_equal(ksym_open_perfmap(map, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "writable"));
	} else {
		/* a user's own map, whatever its mode */
		assert_int_equal(chmod(map, 0666), 0);
		fd = ksym_open_perfmap(map, err, sizeof(err));
		assert_true(fd >= 0);
		close(fd);
	}
	unlink(map);
	free(map);
}

/* file offset of @name in the running executable, read with <elf.h> */
static uint64_t elf_offset_of(const char *name)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct stat st;
	uint64_t off = 0;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(m != MAP_FAILED);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)m;
	Elf64_Shdr *sh = (Elf64_Shdr *)(m + eh->e_shoff);

	for (int i = 0; i < eh->e_shnum && !off; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		Elf64_Sym *sym = (Elf64_Sym *)(m + sh[i].sh_offset);
		const char *str = (const char *)m + sh[sh[i].sh_link].sh_offset;

		for (size_t j = 0; j < sh[i].sh_size / sizeof(*sym); j++)
			if (!strcmp(str + sym[j].st_name, name)) {
				const Elf64_Shdr *s = &sh[sym[j].st_shndx];

				off = sym[j].st_value - s->sh_addr + s->sh_offset;
				break;
			}
	}
	munmap(m, (size_t)st.st_size);
	return off;
}

static void test_bfd_self(void **state)
{
	struct rpt_symtab t = { 0 };
	char err[512], exe[4096];
	uint64_t off = elf_offset_of("report_test_marker");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const struct rpt_sym *s;

	(void)state;
	assert_true(n > 0);
	exe[n] = 0;
	assert_true(off != 0);
	assert_int_equal(report_test_marker(1), 4);
	assert_int_equal(opbfd_load(&t, exe, DEMANGLE_NORMAL, true, err, sizeof(err)), 0);
	s = sym_lookup(&t, off);
	assert_non_null(s);
	assert_string_equal(s->name, "report_test_marker");
	assert_int_equal(s->start, off);
	assert_true(s->end > s->start);
	assert_string_equal(sym_lookup(&t, off + 1)->name, "report_test_marker");
	/* the vma through the containing section matches the symbol's */
	assert_int_equal(sym_key_vma(&t, off), s->vma);
	/* built with -g: a source line in this file */
	assert_non_null(s->file);
	assert_non_null(strstr(s->file, "test_report_symbols.c"));
	assert_true(s->line > 0);
	symtab_free(&t);

	assert_int_equal(opbfd_load(&t, "/nonexistent/binary", DEMANGLE_NONE, false, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/binary"));
	symtab_free(&t);
	/* not an object file */
	assert_int_equal(opbfd_load(&t, "/etc/hostname", DEMANGLE_NONE, false, err, sizeof(err)),
			 -ENOENT);
	symtab_free(&t);
}

static void test_demangle(void **state)
{
	char *d;

	(void)state;
	assert_null(opbfd_demangle("_ZN2fx6helperEi", DEMANGLE_NONE));
	assert_null(opbfd_demangle("plain_c_name", DEMANGLE_NORMAL));
	d = opbfd_demangle("_ZN2fx6helperEi", DEMANGLE_NORMAL);
	assert_string_equal(d, "fx::helper(int)");
	free(d);
	d = opbfd_demangle("_ZN2fx6Worker4spinERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi",
			   DEMANGLE_SMART);
	assert_string_equal(d, "fx::Worker::spin(std::string const&, int)");
	free(d);
}

/* issue 15 item 12: --demangle=smart drops standard defaults, parsed not pattern-matched */
static const struct {
	const char *in, *out;
} smart_cases[] = {
	/* the cases */
	{ "f(std::vector<int, std::allocator<int> >&)", "f(std::vector<int>&)" },
	{ "f(std::map<std::string, int, std::less<std::string>, "
	  "std::allocator<std::pair<std::string const, int> > >&)",
	  "f(std::map<std::string, int>&)" },
	{ "std::unordered_map<K, V, std::hash<K>, std::equal_to<K>, "
	  "std::allocator<std::pair<K const, V> > >",
	  "std::unordered_map<K, V>" },
	{ "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
	  "std::char_traits<char>, std::allocator<char> > > >",
	  "std::vector<std::string>" },
	/* strings, both ABIs, wide */
	{ "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::size() const",
	  "std::string::size() const" },
	{ "std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
	  "std::wstring" },
	/* every container */
	{ "std::list<int*, std::allocator<int*> >", "std::list<int*>" },
	{ "std::__cxx11::list<int, std::allocator<int> >", "std::list<int>" },
	{ "std::deque<char, std::allocator<char> >", "std::deque<char>" },
	{ "std::set<long, std::less<long>, std::allocator<long> >", "std::set<long>" },
	{ "std::multiset<long, std::less<long>, std::allocator<long> >", "std::multiset<long>" },
	{ "std::multimap<int, double, std::less<int>, "
	  "std::allocator<std::pair<int const, double> > >",
	  "std::multimap<int, double>" },
	{ "std::unordered_set<int, std::hash<int>, std::equal_to<int>, std::allocator<int> >",
	  "std::unordered_set<int>" },
	{ "std::unordered_multiset<int, std::hash<int>, std::equal_to<int>, std::allocator<int> >",
	  "std::unordered_multiset<int>" },
	{ "std::unordered_multimap<int, int, std::hash<int>, std::equal_to<int>, "
	  "std::allocator<std::pair<int const, int> > >",
	  "std::unordered_multimap<int, int>" },
	/* nested, innermost first; "> >" stays where the last argument is a template */
	{ "std::vector<std::vector<int, std::allocator<int> >, "
	  "std::allocator<std::vector<int, std::allocator<int> > > >",
	  "std::vector<std::vector<int> >" },
	{ "std::map<std::vector<int, std::allocator<int> >, std::set<int, std::less<int>, "
	  "std::allocator<int> >, std::less<std::vector<int, std::allocator<int> > >, "
	  "std::allocator<std::pair<std::vector<int, std::allocator<int> > const, "
	  "std::set<int, std::less<int>, std::allocator<int> > > > >::find(int)",
	  "std::map<std::vector<int>, std::set<int> >::find(int)" },
	{ "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
	  "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
	  "void std::vector<int>::_M_realloc_insert<int const&>("
	  "__gnu_cxx::__normal_iterator<int*, std::vector<int> >, int const&)" },
	/* non-default arguments stay, and so do the ones before them */
	{ "std::vector<int, MyAlloc<int> >", "std::vector<int, MyAlloc<int> >" },
	{ "std::set<int, std::greater<int>, std::allocator<int> >",
	  "std::set<int, std::greater<int> >" },
	{ "std::map<int, int, std::less<int>, std::allocator<std::pair<int, int> > >",
	  "std::map<int, int, std::less<int>, std::allocator<std::pair<int, int> > >" },
	{ "std::vector<int, std::allocator<long> >", "std::vector<int, std::allocator<long> >" },
	/* names that only look alike */
	{ "fx::vector<int, allocator<int> >", "fx::vector<int, allocator<int> >" },
	{ "std::vector<int, fx::allocator<int> >", "std::vector<int, fx::allocator<int> >" },
	{ "fx::std::vector<int, std::allocator<int> >", "fx::std::vector<int, std::allocator<int> >" },
	{ "allocator<int>::allocate(unsigned long)", "allocator<int>::allocate(unsigned long)" },
	{ "plain_c_name", "plain_c_name" },
	{ "", "" },
	/* operators, lambdas, anonymous namespaces, expressions */
	{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
	  "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
	  "std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)" },
	{ "bool operator< <int>(fx::V<int> const&, fx::V<int> const&)",
	  "bool operator< <int>(fx::V<int> const&, fx::V<int> const&)" },
	{ "fx::Q::operator->() const", "fx::Q::operator->() const" },
	{ "fx::Q::operator>>=(int)", "fx::Q::operator>>=(int)" },
	{ "fx::run()::{lambda(std::vector<int, std::allocator<int> > const&)#1}::operator()"
	  "(std::vector<int, std::allocator<int> > const&) const",
	  "fx::run()::{lambda(std::vector<int> const&)#1}::operator()(std::vector<int> const&) const" },
	{ "(anonymous namespace)::f(std::list<int, std::allocator<int> >)",
	  "(anonymous namespace)::f(std::list<int>)" },
	{ "fx::A<(3)>(2)>::f()", "fx::A<(3)>(2)>::f()" },
	/* unbalanced or odd: the input as it was */
	{ "std::vector<int, std::allocator<int> ", "std::vector<int, std::allocator<int> " },
	{ "std::vector<int, std::allocator<int> > >", "std::vector<int, std::allocator<int> > >" },
	{ "f(std::vector<int, std::allocator<int> >", "f(std::vector<int, std::allocator<int> >" },
	{ "f)(", "f)(" },
	{ "a<b(>c)>", "a<b(>c)>" },
	{ "<<<", "<<<" },
};

static void test_demangle_smart(void **state)
{
	static const struct {
		const char *mangled, *smart;
	} mangled[] = {
		{ "_Z2f1RSt6vectorIiSaIiEE", "f1(std::vector<int>&)" },
		{ "_Z2f2RSt3mapINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEiSt4lessIS5_"
		  "ESaISt4pairIKS5_iEEE",
		  "f2(std::map<std::string, int>&)" },
		{ "_Z2f3RSt13unordered_mapINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt6"
		  "vectorIS5_SaIS5_EESt4hashIS5_ESt8equal_toIS5_ESaISt4pairIKS5_S8_EEE",
		  "f3(std::unordered_map<std::string, std::vector<std::string> >&)" },
		{ "_Z2f4RSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESaIS5_EE",
		  "f4(std::vector<std::string>&)" },
		{ "_Z2f5RSt3setIlSt4lessIlESaIlEERNSt7__cxx1112basic_stringIwSt11char_traitsIwESaIwEEE",
		  "f5(std::set<long>&, std::wstring&)" },
	};
	char deep[4000];
	size_t i;

	(void)state;
	/* end to end through libbfd's demangler */
	for (i = 0; i < sizeof(mangled) / sizeof(mangled[0]); i++) {
		char *d = opbfd_demangle(mangled[i].mangled, DEMANGLE_SMART);

		assert_non_null(d);
		if (strcmp(d, mangled[i].smart))
			fail_msg("%s\n  gave     \"%s\"\n  expected \"%s\"", mangled[i].mangled, d,
				 mangled[i].smart);
		free(d);
	}
	for (i = 0; i < sizeof(smart_cases) / sizeof(smart_cases[0]); i++) {
		char *d = demangle_smart(smart_cases[i].in);

		assert_non_null(d);
		if (strcmp(d, smart_cases[i].out))
			fail_msg("case %zu: \"%s\"\n  gave     \"%s\"\n  expected \"%s\"", i,
				 smart_cases[i].in, d, smart_cases[i].out);
		free(d);
	}
	/* nesting past the parser's limit: the input back, no stack overflow */
	for (i = 0; i + 2 < sizeof(deep) / 2; i++)
		memcpy(deep + 2 * i, "a<", 2);
	deep[2 * i] = '\0';
	{
		char *d = demangle_smart(deep);

		assert_non_null(d);
		assert_string_equal(d, deep);
		free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symtab_bounds), cmocka_unit_test(test_symtab_empty),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_kallsyms_daemon_rules),
		cmocka_unit_test(test_perfmap),       cmocka_unit_test(test_perfmap_trust),
		cmocka_unit_test(test_bfd_self),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_demangle_smart),
	};

	return cmocka_run_group_tests_name("report_symbols", tests, NULL, NULL);
}
