/* bcryptprimitives.dll for wine 8's prefix, which has none: Rust's std (1.78 on) takes its
 * random bytes from ProcessPrng there, and without the DLL every Rust program fails to load
 * (status c0000135). The one export, on RtlGenRandom (advapi32's SystemFunction036), which
 * wine implements. Installed into the test prefix only, by tests/cross/windows.sh. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
