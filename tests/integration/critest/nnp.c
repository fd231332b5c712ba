/*
 * The critest run's stand-in for the nonewprivs image: installed set-user-ID
 * root, it prints the effective uid it runs with, which is 0 unless
 * no_new_privs kept the set-user-ID bit from taking effect.
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("Effective uid: %d\n", (int)geteuid());
	return 0;
}
