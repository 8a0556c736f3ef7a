/*
 * ext_probe.c - finds <dir>/<name>.so, checks who may write it and every
 * directory it is opened through, checks its descriptor head (ext_elf.c)
 * and then the loaded descriptor, and dlopens the checked file by its fd.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext_int.h"
#include "op_trust.h"

/* refusal messages are bounded on purpose: a long path may cut one short */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/*
 * Whom a loader of effective uid @euid believes (lib/op_trust's rule, with
 * the stricter of the two write rules): a root loader root's files only, a
 * user's loader root's and the user's; neither a file or directory its
 * group or others can write (op_trust_for lets a user's group write: whoever
 * can write a plugin puts their code into the loading process).
 */
static struct op_trust ext_probe_trust(uid_t euid)
{
	struct op_trust t = op_trust_for(euid, euid);

	t.forbid |= S_IWGRP | S_IWOTH;
	return t;
}

/*
 * Who may write what a plugin is loaded through (@t: ext_probe_trust).
 * Everyone's loader refuses a plugin file or plugin directory that group or
 * others can write, or that neither root nor the loader's user owns; a root
 * loader applies the same to every directory above the plugin directory, up
 * to / (sshd's StrictModes): whoever can write any of them can put their own
 * code into a root process. A root-owned sticky directory (/tmp) on the way
 * is the one exception: its entries can be renamed only by their owners, and
 * the next one must be root's. op_trust decides; the words are the loader's.
 * @what: "plugin file", "plugin directory", or NULL for a directory above it.
 */
static int ext_probe_check_owner(const struct op_trust *t, const char *what, const char *path,
				 const struct stat *st, char *why, size_t len)
{
	const char *by = (st->st_mode & S_IWOTH) ? "everyone" : "its group";
	unsigned mode = (unsigned)(st->st_mode & 07777);

	/*
	 * A root-owned sticky directory (/tmp): others may write in it, but
	 * not rename or replace an entry they do not own, so the path goes on
	 * safely when its next component is root's and writable by root alone
	 * (checked next, as every directory on the way). The same rule as for
	 * a root daemon's session directory.
	 */
	if (!what && st->st_uid == 0 && (st->st_mode & S_ISVTX))
		return 0;
	if (!op_trust_stat(t, st, what ? what : "directory", path, why, len))
		return 0;
	if (!what && (st->st_mode & t->forbid)) {
		snprintf(why, len,
			 "directory %s (above the plugin directory) is writable by %s (mode "
			 "%04o): a root oprofiled loads plugins only through directories that root "
			 "owns and only root can write - run chmod go-w %s, or install the plugins "
			 "elsewhere",
			 path, by, mode, path);
	} else if (!what) {
		snprintf(why, len,
			 "directory %s (above the plugin directory) is owned by uid %u, but "
			 "oprofiled runs as root: a root oprofiled loads plugins only through "
			 "directories that root owns and only root can write - run chown root %s, "
			 "or install the plugins elsewhere",
			 path, (unsigned)st->st_uid, path);
	} else if (st->st_mode & t->forbid) {
		snprintf(why, len, "%s %s is writable by %s (mode %04o) - run chmod go-w %s", what,
			 path, by, mode, path);
	} else if (t->owner == 0) {
		snprintf(why, len,
			 "%s %s is owned by uid %u, but oprofiled runs as root - run chown root %s",
			 what, path, (unsigned)st->st_uid, path);
	} else {
		snprintf(why, len,
			 "%s %s is owned by uid %u, but oprofiled runs as uid %u and loads only "
			 "plugins that root or uid %u owns - run chown %u %s",
			 what, path, (unsigned)st->st_uid, (unsigned)t->owner, (unsigned)t->owner,
			 (unsigned)t->owner, path);
	}
	return -EPERM;
}

/*
 * Open the plugin file @real (absolute and free of symlinks: realpath) one
 * component at a time from "/", never following a symlink, and check every
 * directory on the fd that the next step opens through: a directory renamed,
 * exchanged or replaced by a symlink after realpath cannot redirect the
 * open, and the file checked is the file opened. Directories from the plugin
 * directory (@rdir_len bytes of @real) down are checked for everyone, those
 * above it for a root loader only (a user's loader is the user's business).
 * Returns the file's fd (O_RDONLY; O_NONBLOCK so that a FIFO cannot hang
 * the daemon) with @st filled, or -errno with @why.
 */
static int ext_probe_open_plugin(const char *real, size_t rdir_len, struct stat *st, char *why,
				 size_t len)
{
	const struct op_trust t = ext_probe_trust(geteuid());
	bool root = geteuid() == 0;
	char dir[PATH_MAX], comp[NAME_MAX + 1];
	const char *at = real + 1, *slash;
	int dfd, fd, rc;
	size_t n;

	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		snprintf(why, len, "cannot open /: %s", strerror(-rc));
		return rc;
	}
	strcpy(dir, "/");
	for (;;) {
		if (fstat(dfd, st)) {
			rc = -errno;
			snprintf(why, len, "%s: %s", dir, strerror(-rc));
			goto out_dir;
		}
		if (strlen(dir) >= rdir_len)
			rc = ext_probe_check_owner(&t, "plugin directory", dir, st, why, len);
		else
			rc = root ? ext_probe_check_owner(&t, NULL, dir, st, why, len) : 0;
		if (rc)
			goto out_dir;
		slash = strchr(at, '/');
		if (!slash)
			break;
		n = (size_t)(slash - at);
		if (n > NAME_MAX) {
			rc = -ENAMETOOLONG;
			snprintf(why, len, "%.*s: %s", (int)(slash - real), real, strerror(-rc));
			goto out_dir;
		}
		memcpy(comp, at, n);
		comp[n] = '\0';
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			snprintf(why, len, "cannot open directory %.*s: %s%s", (int)(slash - real),
				 real, strerror(-rc),
				 rc == -ELOOP || rc == -ENOTDIR || rc == -ENOENT ?
					 " - it changed while oprofiled checked the path" :
					 "");
			goto out_dir;
		}
		close(dfd);
		dfd = fd;
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - real), real);
		at = slash + 1;
	}
	/* op_trust adds O_NOFOLLOW, O_CLOEXEC and O_NONBLOCK: a FIFO cannot hang the daemon */
	fd = op_trust_openat(&t, dfd, at, O_RDONLY, S_IFREG, "plugin file", real, st, why, len);
	close(dfd);
	if (fd == -EINVAL)
		snprintf(why, len, "%s is not a regular file - install the plugin's .so there",
			 real);
	else if (fd == -EPERM)
		ext_probe_check_owner(&t, "plugin file", real, st, why, len);
	else if (fd < 0)
		snprintf(why, len, "cannot open %s: %s%s", real, strerror(-fd),
			 fd == -ELOOP ? " - it changed while oprofiled checked the path" : "");
	return fd;

out_dir:
	close(dfd);
	return rc;
}

/* the version/size/flags rules; @symsize 0 = unknown */
int ext_probe_check_head(uint32_t major, uint32_t minor, uint32_t size, uint32_t flags,
			 size_t symsize, char *why, size_t len)
{
	if (symsize && symsize < 3 * sizeof(uint32_t)) {
		snprintf(why, len,
			 "descriptor \"%s\" is only %zu bytes, SDK %d.%d needs %d - rebuild "
			 "the plugin with OP_EXT_DEFINE()",
			 OP_EXT_SYMBOL, symsize, OP_SDK_MAJOR, OP_SDK_MINOR,
			 OP_EXT_DESCRIPTOR_SIZE_V1_0);
		return -ENOEXEC;
	}
	if (major != OP_SDK_MAJOR) {
		snprintf(why, len,
			 "built for SDK %u.%u, oprofiled provides %d.%d - rebuild the plugin "
			 "against SDK %d.x",
			 major, minor, OP_SDK_MAJOR, OP_SDK_MINOR, OP_SDK_MAJOR);
		return -ENOEXEC;
	}
	if (minor > OP_SDK_MINOR) {
		snprintf(why, len,
			 "built for SDK %u.%u, oprofiled provides %d.%d - use an oprofiled "
			 "with SDK >= %u.%u, or rebuild the plugin against SDK %d.%d",
			 major, minor, OP_SDK_MAJOR, OP_SDK_MINOR, major, minor, OP_SDK_MAJOR,
			 OP_SDK_MINOR);
		return -ENOEXEC;
	}
	if (size < OP_EXT_DESCRIPTOR_SIZE_V1_0) {
		snprintf(why, len,
			 "descriptor size is %u bytes, SDK %d.x needs at least %d - rebuild "
			 "the plugin with OP_EXT_DEFINE()",
			 size, OP_SDK_MAJOR, OP_EXT_DESCRIPTOR_SIZE_V1_0);
		return -ENOEXEC;
	}
	if (symsize && size > symsize) {
		snprintf(why, len,
			 "descriptor claims %u bytes but its symbol has %zu - the plugin is "
			 "broken, rebuild it with OP_EXT_DEFINE()",
			 size, symsize);
		return -ENOEXEC;
	}
	if (flags & ~(uint32_t)OP_EXT_F_NO_EVENT_OK) {
		snprintf(why, len,
			 "descriptor flags 0x%x unknown to SDK %d.%d (known: 0x%x) - rebuild "
			 "the plugin against SDK %d.%d",
			 flags, OP_SDK_MAJOR, OP_SDK_MINOR, (unsigned)OP_EXT_F_NO_EVENT_OK,
			 OP_SDK_MAJOR, OP_SDK_MINOR);
		return -ENOEXEC;
	}
	return 0;
}

int ext_descriptor_peek(const char *path, uint32_t *major, uint32_t *minor, uint32_t *size,
			uint32_t *flags, char *why, size_t why_len)
{
	struct ext_elf_head pk = { 0 };
	int fd, rc;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, why_len, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = ext_elf_peek(fd, &pk, why, why_len);
	close(fd);
	if (rc == 0) {
		*major = pk.major;
		*minor = pk.minor;
		*size = pk.size;
		*flags = pk.flags;
		rc = ext_probe_check_head(pk.major, pk.minor, pk.size, pk.flags, pk.symsize, why,
					  why_len);
	}
	return rc;
}

/*
 * dlopen the file open at @fd through /proc/self/fd/N: the file that was
 * checked, whatever its path names by now. Without /proc there is no such
 * name, and no falling back to the path.
 *
 * ld.so returns an object already loaded under the name it is given before
 * it opens anything, so no object may keep the name /proc/self/fd/N once fd
 * N is closed and its number reused: the fd stays open while its plugin is
 * loaded, and for good if the object outlives dlclose (ext_probe_unload).
 */
static int ext_probe_dlopen_fd(int fd, const struct stat *st, void **handle, char *why, size_t len)
{
	char proc[64];
	struct stat pst;
	const char *e;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (stat(proc, &pst) || pst.st_dev != st->st_dev || pst.st_ino != st->st_ino) {
		snprintf(why, len,
			 "/proc is not mounted (no %s): oprofiled loads plugins only through "
			 "/proc/self/fd, never again by path - mount proc on /proc",
			 proc);
		return -ENOENT;
	}
	dlerror();
	*handle = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
	if (*handle)
		return 0;
	e = dlerror();
	snprintf(why, len, "cannot load: %s - rebuild the plugin for this system",
		 e ? e : "unknown dlopen error");
	return -ENOEXEC;
}

/*
 * dlclose @handle, loaded through @fd (ext_probe_dlopen_fd), and close @fd -
 * unless ld.so still holds an object under its /proc/self/fd name (-z
 * nodelete, C++ unique symbols, a dependency of another object): then @fd
 * stays open for good, so that its number, and the name, never come back
 * for another file.
 */
void ext_probe_unload(void *handle, int fd)
{
	char proc[64];
	void *h;

	if (handle)
		dlclose(handle);
	if (fd < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	h = handle ? dlopen(proc, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD) : NULL;
	if (h)
		dlclose(h);
	else
		close(fd);
}

/*
 * Find, check and dlopen plugin @name of @dir; fill @p. The file is opened
 * once, through directories checked on their fds (ext_probe_open_plugin); its
 * owner, mode and descriptor version/size/flags are checked on that fd, and
 * that fd is what gets loaded. Only a plugin that passed gets its ELF
 * constructors run, and none gets ext_init called here. On refusal, @why
 * says what was expected, what was found and what to do.
 */
int ext_probe_plugin(const char *dir, const char *name, struct ext_probe *p, char *why, size_t len)
{
	uint32_t major, minor, size, flags;
	struct ext_elf_head pk = { 0 };
	const unsigned char *raw;
	char rdir[PATH_MAX];
	size_t symsize = 0, rdir_len;
	ElfW(Sym) *es = NULL;
	struct stat st;
	Dl_info info;
	int rc, fd, i;
	void *sym;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	snprintf(p->path, sizeof(p->path), "%s/%s.so", dir ? dir : "", name ? name : "");
	if (!ext_name_valid(name)) {
		snprintf(why, len,
			 "invalid plugin name - expected 1..%d letters, digits, '_' or '-' "
			 "(no '/', '.' or '..'); plugins are looked up as <plugin dir>/NAME.so",
			 EXT_NAME_MAX);
		return -EINVAL;
	}
	if (!dir || !*dir || !realpath(dir, rdir)) {
		rc = dir && *dir ? -errno : -ENOENT;
		snprintf(why, len,
			 "plugin directory \"%s\": %s - set --plugin-dir, plugin_dir in the "
			 "config file or OP_PLUGIN_DIR",
			 dir ? dir : "", strerror(-rc));
		return rc;
	}
	if (lstat(p->path, &st)) {
		rc = -errno;
		snprintf(why, len,
			 "%s - no plugin of that name in %s (see oprofiled --list-plugins)",
			 strerror(-rc), dir);
		return rc;
	}
	if (!realpath(p->path, p->real)) {
		rc = -errno;
		snprintf(why, len, "cannot resolve the path: %s - fix or remove the file",
			 strerror(-rc));
		return rc;
	}
	rdir_len = strlen(rdir);
	if (S_ISLNK(st.st_mode) && (strncmp(p->real, rdir, rdir_len) || p->real[rdir_len] != '/')) {
		snprintf(why, len,
			 "symlink leads out of the plugin directory %s (to %s) - install the "
			 "plugin file itself in the plugin directory",
			 rdir, p->real);
		return -EPERM;
	}
	/*
	 * The walk checks p->real from rdir down as the plugin directory; a
	 * swap between the two realpath calls could have moved one of them.
	 */
	if (strncmp(p->real, rdir, rdir_len) || (rdir_len > 1 && p->real[rdir_len] != '/')) {
		snprintf(why, len,
			 "%s is not in the plugin directory %s - it changed while oprofiled "
			 "checked the path",
			 p->real, rdir);
		return -EPERM;
	}
	fd = ext_probe_open_plugin(p->real, rdir_len, &st, why, len);
	if (fd < 0)
		return fd;
	rc = ext_elf_peek(fd, &pk, why, len);
	if (rc == 0)
		rc = ext_probe_check_head(pk.major, pk.minor, pk.size, pk.flags, pk.symsize, why,
					  len);
	if (rc == 0)
		rc = ext_probe_dlopen_fd(fd, &st, &p->handle, why, len);
	if (rc) {
		close(fd);
		return rc;
	}
	p->fd = fd;
	sym = dlsym(p->handle, OP_EXT_SYMBOL);
	if (!sym) {
		snprintf(why, len,
			 "does not export the descriptor \"%s\" - not an oprofiled plugin, or "
			 "built without OP_EXT_DEFINE()",
			 OP_EXT_SYMBOL);
		rc = -ENOEXEC;
		goto out_close;
	}
	if (dladdr1(sym, &info, (void **)&es, RTLD_DL_SYMENT) && es)
		symsize = es->st_size;
	raw = sym;
	memcpy(&major, raw + offsetof(struct op_ext_descriptor, abi_major), sizeof(major));
	memcpy(&minor, raw + offsetof(struct op_ext_descriptor, abi_minor), sizeof(minor));
	memcpy(&size, raw + offsetof(struct op_ext_descriptor, size), sizeof(size));
	memcpy(&flags, raw + offsetof(struct op_ext_descriptor, flags), sizeof(flags));
	rc = ext_probe_check_head(major, minor, size, flags, symsize, why, len);
	if (rc)
		goto out_close;
	/* the descriptor's size is its third member, not its first */
	memset(&p->desc, 0, sizeof(p->desc));
	memcpy(&p->desc, sym, size < sizeof(p->desc) ? size : sizeof(p->desc));
	for (i = 0; i < (int)(sizeof(p->desc.reserved) / sizeof(p->desc.reserved[0])); i++)
		if (p->desc.reserved[i]) {
			snprintf(why, len,
				 "descriptor reserved slot %d is not zero (found %p), SDK %d.%d "
				 "needs zero - rebuild the plugin with OP_EXT_DEFINE()",
				 i, p->desc.reserved[i], OP_SDK_MAJOR, OP_SDK_MINOR);
			rc = -ENOEXEC;
			goto out_close;
		}
	if (!p->desc.name || strcmp(p->desc.name, name)) {
		snprintf(why, len,
			 "descriptor name is \"%.*s\", expected \"%s\" (the file stem) - "
			 "rename the file to <name>.so or fix the name in OP_EXT_DEFINE()",
			 EXT_NAME_MAX, p->desc.name ? p->desc.name : "(null)", name);
		rc = -ENOEXEC;
		goto out_close;
	}
	if (!p->desc.ext_init) {
		snprintf(why, len, "descriptor has no ext_init - set it in OP_EXT_DEFINE()");
		rc = -ENOEXEC;
		goto out_close;
	}
	if (!p->desc.version)
		p->desc.version = "";
	if (!p->desc.summary)
		p->desc.summary = "";
	return 0;

out_close:
	ext_probe_unload(p->handle, p->fd);
	p->handle = NULL;
	p->fd = -1;
	return rc;
}
