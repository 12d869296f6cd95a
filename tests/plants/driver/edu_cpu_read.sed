# On top of edu_cpu.sed: a device read served by the CPU, which copies the page itself and raises
# edu's interrupt by hand (its raise register, BAR0 + 0x60) once for each of the two transfers, and
# counts them: the kernel's count of edu's interrupts is right, edu's DMA registers are not.
s/^#define PLANT_CPU_SERVES 1$/#define PLANT_CPU_SERVES (dir == DMA_TO_DEVICE)/
s/^#define PLANT_IRQS_RAISED 0$/#define PLANT_IRQS_RAISED 2/
s/plant: the CPU copies/plant: the CPU reads, edu's interrupt raised by hand/
