#include "compiler/Driver.h"

int main(int argc, char **argv) { return infracc::runDriver(argc, argv); }
