#include "preload/intercept/libc_symbols.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace proflaunch::intercept {
namespace {

// No libc string function here: this runs before a sanitizer runtime has
// set up its interceptors of them (an intercepted strcmp would jump through
// a null pointer).
bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

uint32_t gnu_hash(const char* name) {
  uint32_t h = 5381;
  for (auto* p = reinterpret_cast<const unsigned char*>(name); *p; ++p) h = h * 33 + *p;
  return h;
}

uint32_t sysv_hash(const char* name) {
  uint32_t h = 0;
  for (auto* p = reinterpret_cast<const unsigned char*>(name); *p; ++p) {
    h = (h << 4) + *p;
    const uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// glibc rewrites most d_ptr entries of a loaded object to absolute addresses;
// loaders that keep .dynamic read-only leave them as offsets. Accept both.
uintptr_t absolute(uintptr_t ptr, uintptr_t base) { return ptr < base ? ptr + base : ptr; }

struct DynamicTables {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu_hash = nullptr;
  const uint32_t* sysv_hash = nullptr;
  const ElfW(Half)* versym = nullptr;
};

DynamicTables read_dynamic(const ElfW(Dyn)* dyn, uintptr_t base) {
  DynamicTables t;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    const uintptr_t p = absolute(dyn->d_un.d_ptr, base);
    switch (dyn->d_tag) {
      case DT_SYMTAB: t.symtab = reinterpret_cast<const ElfW(Sym)*>(p); break;
      case DT_STRTAB: t.strtab = reinterpret_cast<const char*>(p); break;
      case DT_GNU_HASH: t.gnu_hash = reinterpret_cast<const uint32_t*>(p); break;
      case DT_HASH: t.sysv_hash = reinterpret_cast<const uint32_t*>(p); break;
      case DT_VERSYM: t.versym = reinterpret_cast<const ElfW(Half)*>(p); break;
      default: break;
    }
  }
  return t;
}

bool is_definition(const ElfW(Sym)& sym) {
  const int type = ELF64_ST_TYPE(sym.st_info);
  return sym.st_shndx != SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT);
}

// Chooses between candidates: the default version (not hidden) wins.
struct Candidate {
  const ElfW(Sym)* sym = nullptr;
  bool is_default = false;
  void offer(const DynamicTables& t, uint32_t index) {
    const bool def = t.versym == nullptr || (t.versym[index] & 0x8000) == 0;
    if (sym == nullptr || (def && !is_default)) {
      sym = &t.symtab[index];
      is_default = def;
    }
  }
};

Candidate lookup_gnu(const DynamicTables& t, const char* name) {
  Candidate best;
  const uint32_t nbuckets = t.gnu_hash[0];
  const uint32_t symoffset = t.gnu_hash[1];
  const uint32_t bloom_words = t.gnu_hash[2];
  if (nbuckets == 0) return best;
  const auto* bloom = reinterpret_cast<const ElfW(Addr)*>(t.gnu_hash + 4);
  const auto* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_words);
  const uint32_t* chain = buckets + nbuckets;
  const uint32_t h = gnu_hash(name);
  for (uint32_t i = buckets[h % nbuckets]; i >= symoffset && i != 0; ++i) {
    const uint32_t h2 = chain[i - symoffset];
    if ((h | 1) == (h2 | 1) && is_definition(t.symtab[i]) &&
        same_name(t.strtab + t.symtab[i].st_name, name))
      best.offer(t, i);
    if (h2 & 1) break;
  }
  return best;
}

Candidate lookup_sysv(const DynamicTables& t, const char* name) {
  Candidate best;
  const uint32_t nbucket = t.sysv_hash[0];
  if (nbucket == 0) return best;
  const uint32_t* bucket = t.sysv_hash + 2;
  const uint32_t* chain = bucket + nbucket;
  for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i != STN_UNDEF; i = chain[i]) {
    if (is_definition(t.symtab[i]) && same_name(t.strtab + t.symtab[i].st_name, name))
      best.offer(t, i);
  }
  return best;
}

bool is_libc(const char* path) {
  if (path == nullptr) return false;
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p)
    if (*p == '/') base = p + 1;
  const char* prefix = "libc.so";
  for (; *prefix != '\0'; ++prefix, ++base)
    if (*base != *prefix) return false;
  return true;
}

}  // namespace

void* find_symbol_in_object(const void* dynamic, unsigned long base, const char* name) {
  const DynamicTables t = read_dynamic(static_cast<const ElfW(Dyn)*>(dynamic), base);
  if (t.symtab == nullptr || t.strtab == nullptr) return nullptr;
  Candidate found;
  if (t.gnu_hash != nullptr) {
    found = lookup_gnu(t, name);
  } else if (t.sysv_hash != nullptr) {
    found = lookup_sysv(t, name);
  }
  if (found.sym == nullptr) return nullptr;
  // IFUNC resolvers are not expected for dlsym/dlvsym; refuse rather than call one.
  if (ELF64_ST_TYPE(found.sym->st_info) == STT_GNU_IFUNC) return nullptr;
  return reinterpret_cast<void*>(base + found.sym->st_value);
}

// The loader's list of loaded objects, read directly: dl_iterate_phdr is
// intercepted by ThreadSanitizer, whose interceptor jumps through a null
// pointer when called (through our dlsym) while TSan is still initializing.
void* find_libc_symbol(const char* name) {
  for (const link_map* object = _r_debug.r_map; object != nullptr; object = object->l_next)
    if (is_libc(object->l_name) && object->l_ld != nullptr)
      return find_symbol_in_object(object->l_ld, object->l_addr, name);
  return nullptr;
}

void* find_next_symbol(const char* name) {
  const link_map* object = _r_debug.r_map;
  while (object != nullptr && object->l_ld != _DYNAMIC) object = object->l_next;
  if (object != nullptr) {
    for (object = object->l_next; object != nullptr; object = object->l_next) {
      if (object->l_ld == nullptr) continue;
      if (void* found = find_symbol_in_object(object->l_ld, object->l_addr, name)) return found;
    }
  }
  return find_libc_symbol(name);
}

}  // namespace proflaunch::intercept
