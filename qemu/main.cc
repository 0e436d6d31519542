// Placeholder until the device lands.
#include "cli.h"
int main() {
    return 0;
}
