"""The LLVM IR of generic_entry.py's entry, its constants (offsets, sizes) named in capitals, which
generic_entry._text replaces."""

IR = """
@tj_ndarray_type = external global i8
@tj_tuple_type = external global i8
@tj_int_type = external global i8
@tj_bool_type = external global i8
@tj_true = external global i8
@tj_none = external global i8
@tj_dtype_uint8 = external global i8
@tj_parallel_for = external global i8
declare void @tj_Py_IncRef(ptr)
declare void @tj_Py_DecRef(ptr)
declare i64 @tj_PyLong_AsLongLongAndOverflow(ptr, ptr)
declare ptr @tj_PyEval_SaveThread()
declare void @tj_PyEval_RestoreThread(ptr)
declare ptr @tj_PyTuple_New(i64)
declare ptr @tj_PyArray_NewFromDescr(ptr, ptr, i32, ptr, ptr, ptr, i32, ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define internal ptr @field(ptr %obj, i64 %offset) alwaysinline {
  %p = getelementptr i8, ptr %obj, i64 %offset
  %v = load ptr, ptr %p
  ret ptr %v
}

define internal i1 @has_type(ptr %obj, ptr %type) alwaysinline {
  %t = call ptr @field(ptr %obj, i64 8)
  %is = icmp eq ptr %t, %type
  ret i1 %is
}

define internal ptr @aligned(ptr %p) alwaysinline {       ; p rounded up to ALIGN
  %i = ptrtoint ptr %p to i64
  %up = add i64 %i, ALIGN_LESS_1
  %down = and i64 %up, MINUS_ALIGN
  %q = inttoptr i64 %down to ptr
  ret ptr %q
}

define internal ptr @item_data(ptr %tuple, i64 %k) alwaysinline {   ; the data of an array, item k of a tuple
  %o = shl i64 %k, 3
  %at = add i64 %o, TUPLE_ITEMS
  %item = call ptr @field(ptr %tuple, i64 %at)
  %data = call ptr @field(ptr %item, i64 DATA)
  ret ptr %data
}

define internal ptr @array_data(ptr %obj, ptr %rec) alwaysinline {  ; rec: [descr, ndim, dims...]; null: no
entry:
  %is = call i1 @has_type(ptr %obj, ptr @tj_ndarray_type)
  br i1 %is, label %flags, label %no
flags:
  %fp = getelementptr i8, ptr %obj, i64 FLAGS
  %f = load i32, ptr %fp
  %fm = and i32 %f, WANT
  %fok = icmp eq i32 %fm, WANT
  br i1 %fok, label %descr, label %no
descr:
  %d = call ptr @field(ptr %obj, i64 DESCR)
  %want = load ptr, ptr %rec
  %dok = icmp eq ptr %d, %want
  br i1 %dok, label %ndim, label %no
ndim:
  %ndp = getelementptr i8, ptr %obj, i64 ND
  %nd32 = load i32, ptr %ndp
  %nd = sext i32 %nd32 to i64
  %rnp = getelementptr i64, ptr %rec, i64 1
  %rn = load i64, ptr %rnp
  %nok = icmp eq i64 %nd, %rn
  br i1 %nok, label %dims, label %no
dims:
  %shape = call ptr @field(ptr %obj, i64 DIMENSIONS)
  br label %loop
loop:
  %k = phi i64 [0, %dims], [%k1, %check]
  %more = icmp slt i64 %k, %rn
  br i1 %more, label %check, label %yes
check:
  %gp = getelementptr i64, ptr %shape, i64 %k
  %g = load i64, ptr %gp
  %k2 = add i64 %k, 2
  %wp = getelementptr i64, ptr %rec, i64 %k2
  %w = load i64, ptr %wp
  %k1 = add i64 %k, 1
  %eq = icmp eq i64 %g, %w
  br i1 %eq, label %loop, label %no
yes:
  %data = call ptr @field(ptr %obj, i64 DATA)
  ret ptr %data
no:
  ret ptr null
}

define internal void @copy(ptr %to, ptr %from, i64 %n) alwaysinline {   ; n bytes of a scalar's value
entry:
  switch i64 %n, label %other [ i64 8, label %c8
                                i64 16, label %c16
                                i64 4, label %c4 ]
c8:
  %x8 = load i64, ptr %from, align 1
  store i64 %x8, ptr %to
  ret void
c16:
  %x16 = load i128, ptr %from, align 1
  store i128 %x16, ptr %to
  ret void
c4:
  %x4 = load i32, ptr %from, align 1
  store i32 %x4, ptr %to
  ret void
other:
  call void @llvm.memcpy.p0.p0.i64(ptr %to, ptr %from, i64 %n, i1 false)
  ret void
}

define ptr @tj_generic_entry(ptr %self, ptr %args) nounwind "probe-stack"="inline-asm" {
entry:
  %i.a = alloca i64
  %cur.a = alloca ptr
  %ovf = alloca i32
  %arena.a = alloca ptr
  %made.a = alloca i64
  %slots = alloca [MAX_IN x [16 x i8]], align 16    ; Python scalars' values
  %table = alloca [MAX_TABLE x ptr], align 8
  %outs = alloca [MAX_TABLE x ptr], align 8
  store ptr null, ptr %arena.a
  %d = call ptr @item_data(ptr %self, i64 5)
  %n_in = load i64, ptr %d
  %n_outp = getelementptr i64, ptr %d, i64 1
  %n_out = load i64, ptr %n_outp
  %tuple_ok = call i1 @has_type(ptr %args, ptr @tj_tuple_type)
  br i1 %tuple_ok, label %sized, label %fail
sized:
  %anp = getelementptr i8, ptr %args, i64 TUPLE_SIZE
  %an = load i64, ptr %anp
  %n_ok = icmp eq i64 %an, %n_in
  br i1 %n_ok, label %start, label %fail
start:
  store i64 0, ptr %i.a
  %first = getelementptr i64, ptr %d, i64 HEADER
  store ptr %first, ptr %cur.a
  br label %in.head
in.head:
  %i = load i64, ptr %i.a
  %in_more = icmp slt i64 %i, %n_in
  br i1 %in_more, label %in.body, label %in.done
in.body:
  %rec = load ptr, ptr %cur.a
  %kind = load i64, ptr %rec
  %lenp = getelementptr i64, ptr %rec, i64 1
  %len = load i64, ptr %lenp
  %next = getelementptr i64, ptr %rec, i64 %len
  store ptr %next, ptr %cur.a
  %io = shl i64 %i, 3
  %io2 = add i64 %io, TUPLE_ITEMS
  %obj = call ptr @field(ptr %args, i64 %io2)
  %type = call ptr @field(ptr %obj, i64 8)
  %so = shl i64 %i, 4
  %slot = getelementptr i8, ptr %slots, i64 %so
  %tslot = getelementptr ptr, ptr %table, i64 %i
  %value = getelementptr i8, ptr %obj, i64 SCALAR_VALUE
  %w2 = getelementptr i64, ptr %rec, i64 2
  %w3 = getelementptr i64, ptr %rec, i64 3
  %is_array = icmp eq i64 %kind, 0                  ; (most inputs: a branch, not the switch's jump table)
  br i1 %is_array, label %k.array, label %k.other
k.other:
  switch i64 %kind, label %fail [ i64 1, label %k.copy
                                  i64 2, label %k.int
                                  i64 3, label %k.scalar ]
k.array:
  %pa = call ptr @array_data(ptr %obj, ptr %w2)
  %na = icmp eq ptr %pa, null
  br i1 %na, label %fail, label %k.array.ok
k.array.ok:
  store ptr %pa, ptr %tslot
  br label %in.next
k.copy:
  %ct = load ptr, ptr %w2
  %c_ok = icmp eq ptr %type, %ct
  br i1 %c_ok, label %k.copy.ok, label %fail
k.copy.ok:
  %cn = load i64, ptr %w3
  call void @copy(ptr %slot, ptr %value, i64 %cn)
  store ptr %slot, ptr %tslot
  br label %in.next
k.int:
  %i_ok = icmp eq ptr %type, @tj_int_type
  br i1 %i_ok, label %k.int.convert, label %fail
k.int.convert:
  %x = call i64 @tj_PyLong_AsLongLongAndOverflow(ptr %obj, ptr %ovf)
  %ov = load i32, ptr %ovf
  %fits = icmp eq i32 %ov, 0
  %bounds = call ptr @item_data(ptr %self, i64 1)
  %lo_at = shl i64 %i, 1
  %lop = getelementptr i64, ptr %bounds, i64 %lo_at
  %lo = load i64, ptr %lop
  %hip = getelementptr i64, ptr %lop, i64 1
  %hi = load i64, ptr %hip
  %above = icmp sge i64 %x, %lo
  %below = icmp sle i64 %x, %hi
  %in_range = and i1 %above, %below
  %x_ok = and i1 %fits, %in_range
  br i1 %x_ok, label %k.int.ok, label %fail
k.int.ok:
  store i64 %x, ptr %slot
  store ptr %slot, ptr %tslot
  br label %in.next
k.scalar:
  %s_array = icmp eq ptr %type, @tj_ndarray_type
  br i1 %s_array, label %k.array, label %k.scalar.numpy
k.scalar.numpy:
  %w4 = getelementptr i64, ptr %rec, i64 4
  %st = load ptr, ptr %w4
  %s_numpy = icmp eq ptr %type, %st
  br i1 %s_numpy, label %k.scalar.copy, label %k.scalar.bool
k.scalar.copy:
  %w5 = getelementptr i64, ptr %rec, i64 5
  %sn = load i64, ptr %w5
  call void @copy(ptr %slot, ptr %value, i64 %sn)
  store ptr %slot, ptr %tslot
  br label %in.next
k.scalar.bool:
  %w6 = getelementptr i64, ptr %rec, i64 6
  %bool_ok = load i64, ptr %w6
  %is_bool = icmp eq ptr %type, @tj_bool_type
  %b_wanted = icmp ne i64 %bool_ok, 0
  %b_ok = and i1 %is_bool, %b_wanted
  br i1 %b_ok, label %k.scalar.bool.ok, label %fail
k.scalar.bool.ok:
  %is_true = icmp eq ptr %obj, @tj_true
  %b8 = zext i1 %is_true to i8
  store i8 %b8, ptr %slot
  store ptr %slot, ptr %tslot
  br label %in.next
in.next:
  %i1 = add i64 %i, 1
  store i64 %i1, ptr %i.a
  br label %in.head

in.done:
  store i64 0, ptr %made.a
  %modep = getelementptr i64, ptr %d, i64 2
  %mode = load i64, ptr %modep
  %abytesp = getelementptr i64, ptr %d, i64 3
  %abytes = load i64, ptr %abytesp
  %aslotp = getelementptr i64, ptr %d, i64 4
  %aslot = load i64, ptr %aslotp
  %atslot = getelementptr ptr, ptr %table, i64 %aslot
  switch i64 %mode, label %out.start [ i64 1, label %ar.stack
                                       i64 2, label %ar.heap ]
ar.stack:                             ; (rounded up by hand: an alloca aligned to ALIGN realigns the frame)
  %sbytes = add i64 %abytes, ALIGN
  %sa = alloca i8, i64 %sbytes, align 16
  %sptr = call ptr @aligned(ptr %sa)
  store ptr %sptr, ptr %atslot
  br label %out.start
ar.heap:
  %cache = call ptr @item_data(ptr %self, i64 2)
  %held = load ptr, ptr %cache
  %has = icmp ne ptr %held, @tj_none
  br i1 %has, label %ar.take, label %ar.new
ar.take:
  call void @tj_Py_IncRef(ptr @tj_none)
  store ptr @tj_none, ptr %cache
  store ptr %held, ptr %arena.a
  br label %ar.have
ar.new:
  call void @tj_Py_IncRef(ptr @tj_dtype_uint8)
  %new_arena = call ptr @tj_PyArray_NewFromDescr(ptr @tj_ndarray_type, ptr @tj_dtype_uint8, i32 1, ptr %abytesp, ptr null, ptr null, i32 0, ptr null)
  %no_arena = icmp eq ptr %new_arena, null
  br i1 %no_arena, label %nomem, label %ar.made
ar.made:
  store ptr %new_arena, ptr %arena.a
  br label %ar.have
ar.have:
  %arena = load ptr, ptr %arena.a
  %adata = call ptr @field(ptr %arena, i64 DATA)
  %aptr = call ptr @aligned(ptr %adata)
  store ptr %aptr, ptr %atslot
  br label %out.start

out.start:
  %oofp = getelementptr i64, ptr %d, i64 7
  %oof = load i64, ptr %oofp
  %orec0 = getelementptr i64, ptr %d, i64 %oof
  store ptr %orec0, ptr %cur.a
  br label %out.head
out.head:
  %j = load i64, ptr %made.a
  %out_more = icmp slt i64 %j, %n_out
  br i1 %out_more, label %out.body, label %run
out.body:
  %orec = load ptr, ptr %cur.a
  %odescr = load ptr, ptr %orec
  %ondp = getelementptr i64, ptr %orec, i64 1
  %ond = load i64, ptr %ondp
  %odims = getelementptr i64, ptr %orec, i64 2
  %onext = getelementptr i64, ptr %odims, i64 %ond
  store ptr %onext, ptr %cur.a
  call void @tj_Py_IncRef(ptr %odescr)
  %ond32 = trunc i64 %ond to i32
  %out = call ptr @tj_PyArray_NewFromDescr(ptr @tj_ndarray_type, ptr %odescr, i32 %ond32, ptr %odims, ptr null, ptr null, i32 0, ptr null)
  %no_out = icmp eq ptr %out, null
  br i1 %no_out, label %nomem, label %out.made
out.made:
  %outp = getelementptr ptr, ptr %outs, i64 %j
  store ptr %out, ptr %outp
  %odata = call ptr @field(ptr %out, i64 DATA)
  %oslot_i = add i64 %n_in, %j
  %oslot = getelementptr ptr, ptr %table, i64 %oslot_i
  store ptr %odata, ptr %oslot
  %j1 = add i64 %j, 1
  store i64 %j1, ptr %made.a
  br label %out.head

run:
  %relp = getelementptr i64, ptr %d, i64 5
  %rel = load i64, ptr %relp
  %release = icmp ne i64 %rel, 0
  br i1 %release, label %run.release, label %run.steps
run.release:
  %saved = call ptr @tj_PyEval_SaveThread()
  br label %run.steps
run.steps:
  %state = phi ptr [%saved, %run.release], [null, %run]
  %nsp = getelementptr i64, ptr %d, i64 6
  %n_steps = load i64, ptr %nsp
  %sofp = getelementptr i64, ptr %d, i64 8
  %sof = load i64, ptr %sofp
  %steps = getelementptr i64, ptr %d, i64 %sof
  br label %step.head
step.head:
  %k = phi i64 [0, %run.steps], [%k1, %step.next]
  %step_more = icmp slt i64 %k, %n_steps
  br i1 %step_more, label %step.body, label %done
step.body:
  %k2 = mul i64 %k, 3
  %fnp = getelementptr i64, ptr %steps, i64 %k2
  %fn = load ptr, ptr %fnp
  %chp = getelementptr i64, ptr %fnp, i64 1
  %chunks = load i64, ptr %chp
  %serial = icmp eq i64 %chunks, 0
  br i1 %serial, label %step.serial, label %step.parallel
step.serial:
  call void %fn(ptr %table)
  br label %step.next
step.parallel:
  %wkp = getelementptr i64, ptr %fnp, i64 2
  %wake = load i64, ptr %wkp
  %pool = load ptr, ptr @tj_parallel_for
  call void %pool(ptr %fn, ptr %table, i64 %chunks, i64 %wake)
  br label %step.next
step.next:
  %k1 = add i64 %k, 1
  br label %step.head

done:
  %restore = icmp ne ptr %state, null
  br i1 %restore, label %done.restore, label %done.arena
done.restore:
  call void @tj_PyEval_RestoreThread(ptr %state)
  br label %done.arena
done.arena:                           ; a heap arena back into an empty cache, whose None we drop instead
  %heap = icmp eq i64 %mode, 2
  br i1 %heap, label %done.put, label %done.count
done.put:
  %cache2 = call ptr @item_data(ptr %self, i64 2)
  %held2 = load ptr, ptr %cache2
  %empty = icmp eq ptr %held2, @tj_none
  br i1 %empty, label %done.keep, label %done.count
done.keep:
  %mine = load ptr, ptr %arena.a
  store ptr %mine, ptr %cache2
  store ptr @tj_none, ptr %arena.a
  br label %done.count
done.count:
  %drop = load ptr, ptr %arena.a
  %dropping = icmp ne ptr %drop, null
  br i1 %dropping, label %done.drop, label %done.counted
done.drop:
  call void @tj_Py_DecRef(ptr %drop)
  store ptr null, ptr %arena.a
  br label %done.counted
done.counted:
  %counter = call ptr @item_data(ptr %self, i64 0)
  %hits = load i64, ptr %counter
  %hits1 = add i64 %hits, 1
  store i64 %hits1, ptr %counter
  %single = icmp eq i64 %n_out, 1
  br i1 %single, label %ret.single, label %ret.tuple
ret.single:
  %only = load ptr, ptr %outs
  ret ptr %only
ret.tuple:
  %result = call ptr @tj_PyTuple_New(i64 %n_out)
  %no_tuple = icmp eq ptr %result, null
  br i1 %no_tuple, label %nomem, label %fill.head
fill.head:
  %m = phi i64 [0, %ret.tuple], [%m1, %fill.body]
  %fill_more = icmp slt i64 %m, %n_out
  br i1 %fill_more, label %fill.body, label %ret.result
fill.body:
  %mp = getelementptr ptr, ptr %outs, i64 %m
  %mo = load ptr, ptr %mp
  %mo_at = shl i64 %m, 3
  %mo_at2 = add i64 %mo_at, TUPLE_ITEMS
  %mslot = getelementptr i8, ptr %result, i64 %mo_at2
  store ptr %mo, ptr %mslot
  %m1 = add i64 %m, 1
  br label %fill.head
ret.result:
  ret ptr %result

nomem:                                ; drop the arena and the outputs made, return NULL (MemoryError set)
  %lost = load ptr, ptr %arena.a
  call void @tj_Py_DecRef(ptr %lost)
  %made = load i64, ptr %made.a
  br label %nomem.head
nomem.head:
  %u = phi i64 [0, %nomem], [%u1, %nomem.body]
  %u_more = icmp slt i64 %u, %made
  br i1 %u_more, label %nomem.body, label %nomem.done
nomem.body:
  %up = getelementptr ptr, ptr %outs, i64 %u
  %uo = load ptr, ptr %up
  call void @tj_Py_DecRef(ptr %uo)
  %u1 = add i64 %u, 1
  br label %nomem.head
nomem.done:
  ret ptr null

fail:
  %missp = getelementptr i64, ptr %d, i64 9
  %miss = load ptr, ptr %missp
  call void @tj_Py_IncRef(ptr %miss)
  ret ptr %miss
}
"""
