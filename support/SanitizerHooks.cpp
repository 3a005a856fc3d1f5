// Defaults for the sanitizer builds (CI's ASan+UBSan tests, the fuzz targets); the
// runtime asks for these functions by name, and without a sanitizer they are unused.
//
// LeakSanitizer: allocations that Debian's libraries keep and never free, which are not
// infracc's. The graphs infracc builds (cgraph) and everything of its own stay checked.
//  * Graphviz 2.43's layout library (HTML label parsing, its plugin configuration text)
//    and the font stack its renderers use (pango, cairo, fontconfig, glib).
//  * OTF2 3.0.2: OTF2_Reader_Open does not free what it allocated when the anchor file is
//    damaged (otf2_archive_open, otf2_file_posix_open; about 20 KB per failed open).
extern "C" const char *__lsan_default_suppressions() {
  return "leak:libgvc.so\n"
         "leak:libgvplugin_pango.so\n"
         "leak:libpango\n"
         "leak:libcairo.so\n"
         "leak:libfontconfig.so\n"
         "leak:libglib-2.0.so\n"
         "leak:libopen-trace-format2.so\n";
}
// ... and says nothing about them at exit (standard error stays the program's).
extern "C" const char *__lsan_default_options() { return "print_suppressions=0"; }
