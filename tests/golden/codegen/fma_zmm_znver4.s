vmovups (%rax,%rdi), %zmm0
vmovups (%rcx,%rdi), %zmm1
vfmadd213ps (%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, (%rsi,%rdi)
vmovups 64(%rax,%rdi), %zmm0
vmovups 64(%rcx,%rdi), %zmm1
vfmadd213ps 64(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 64(%rsi,%rdi)
vmovups 128(%rax,%rdi), %zmm0
vmovups 128(%rcx,%rdi), %zmm1
vfmadd213ps 128(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 128(%rsi,%rdi)
vmovups 192(%rax,%rdi), %zmm0
vmovups 192(%rcx,%rdi), %zmm1
vfmadd213ps 192(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 192(%rsi,%rdi)
vmovups 256(%rax,%rdi), %zmm0
vmovups 256(%rcx,%rdi), %zmm1
vfmadd213ps 256(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 256(%rsi,%rdi)
vmovups 320(%rax,%rdi), %zmm0
vmovups 320(%rcx,%rdi), %zmm1
vfmadd213ps 320(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 320(%rsi,%rdi)
vmovups 384(%rax,%rdi), %zmm0
vmovups 384(%rcx,%rdi), %zmm1
vfmadd213ps 384(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 384(%rsi,%rdi)
vmovups 448(%rax,%rdi), %zmm0
vmovups 448(%rcx,%rdi), %zmm1
vfmadd213ps 448(%rdx,%rdi), %zmm0, %zmm1
vmovups %zmm1, 448(%rsi,%rdi)
