// Extension API of the simulated driver: filled in by the simulator issue.
#pragma once
