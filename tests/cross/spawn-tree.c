/* A Windows process tree for the cancel/close checks of tests/cross/windows.sh:
 * `spawn-tree.exe <depth> <tag>` starts `spawn-tree.exe <depth-1> <tag>` (down to 0), then
 * sleeps 30 s. Every command line holds <tag>, so the check finds the whole tree (child and
 * grandchild included) by it in /proc, where wine shows each Windows process's command line;
 * each process also prints its pid, for checks that look it up with OpenProcess
 * (core/tests/windows_trees.rs).
 * C with mingw-w64, not Rust: a few lines of Win32 need no crate of their own. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: spawn-tree <depth> <tag>\n");
        return 2;
    }
    int depth = atoi(argv[1]);
    if (depth > 0) {
        char self[MAX_PATH], line[2 * MAX_PATH];
        GetModuleFileNameA(NULL, self, MAX_PATH);
        snprintf(line, sizeof line, "\"%s\" %d %s", self, depth - 1, argv[2]);
        STARTUPINFOA startup = {sizeof startup};
        PROCESS_INFORMATION child;
        /* Handles inherited: the whole tree prints into the output the command's caller reads. */
        if (!CreateProcessA(self, line, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &child)) {
            fprintf(stderr, "spawn-tree: CreateProcess failed (%lu)\n", GetLastError());
            return 1;
        }
    }
    printf("spawn-tree %d %s started, pid %lu\n", depth, argv[2], GetCurrentProcessId());
    fflush(stdout);
    Sleep(30000);
    return 0;
}
