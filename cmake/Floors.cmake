# The floors of infracc's source tree, bottom to top. A file may include headers of its
# own floor and of the floors below it, never of a floor above (docs/DEVELOPING.md).
#
#   support             diagnostics, units, options, atomic outputs, progress, input files
#   ir                  topology, schedule, placement, module; the registries
#   formats             descriptions of foreign formats shared by a reader and a writer
#   blueprints          device and fabric generators
#   compiler/frontends  one folder per input format
#   passes              transformations and analyses of the module
#   backends            one folder per target family
#   visualize           pictures of fabrics, schedules and runs
#   compiler            the driver and main: the only floor that includes the frontends
set(INFRACC_FLOORS
  support ir formats blueprints compiler/frontends passes backends visualize compiler)

# Floors that face the user: only the driver (compiler/) includes them, so the libraries
# (passes, backends, visualize) stay usable without any frontend.
set(INFRACC_USER_FACING_FLOORS compiler/frontends compiler)

# Headers generated into the build tree, with the floor that owns them.
set(INFRACC_GENERATED_HEADERS "infracc/Version.h=compiler" "formats/ChakraEt.pb.h=formats")
